"""The frameworks' option tables (tests/data/*_options.tsv) as the tests read them: one home for
the TSV reader and for the argparse parser built from Megatron-LM's options (stdlib only)."""
import argparse
import os


def read_tsv(data_dir, name):
    """The rows of a table: '#' lines are comments, the first other line the header."""
    rows, header = [], None
    with open(os.path.join(data_dir, name), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if header is None:
                header = cells
            else:
                rows.append(dict(zip(header, cells)))
    return rows


def megatron_parser(data_dir):
    """argparse as Megatron-LM builds its options (allow_abbrev=False), from megatron_options.tsv."""
    p = argparse.ArgumentParser(allow_abbrev=False, add_help=False, exit_on_error=False)
    for r in read_tsv(data_dir, "megatron_options.tsv"):
        names = r["options"].split()
        if r["values"] == "0":
            p.add_argument(*names, action="store_true")
            continue
        kw = {"type": int} if r["type"] == "int" else {}
        if r["choices"]:
            kw["choices"] = r["choices"].split(",")
        if r["default"]:
            kw["default"] = int(r["default"]) if r["type"] == "int" else r["default"]
        p.add_argument(*names, **kw)
    return p
