# Offline check, not part of the build or the tests: is there a V schedule (stage s and 2p-1-s on
# rank s) that finishes within T slots under a memory cap? Writes a time-indexed feasibility ILP in
# LP format for an external solver (Debian's coinor-cbc: `cbc FILE.lp solve`; "infeasible" means
# no such schedule exists). docs/bench.md ("Against V-Min at its own cap") uses it.
#
#   python3 vshape_ilp.py P M T CAP4 OUT.lp
#
# The model is the timed simulator's with unit costs, a V chunk's F, I and W each one slot (half a
# time unit), no comm: F(s) after F(s-1); I(s) after F(s) and I(s+1); W(s) after I(s); one action
# per rank per slot. Integer slots lose nothing: every release time is then an integer. Memory in
# quarters of a microbatch's activation (M_W = M_B/2): F takes 2 at its start, I and W free 1 each
# at their end, frees before allocations at one instant, and the level must stay <= CAP4.
# Microbatches are numbered by their order at stage 0 (they are interchangeable).
import sys
p, m, T, cap4 = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
S = 2 * p
rank = lambda s: s if s < p else 2 * p - 1 - s
jobs = [(k, s, b) for k in "FIW" for s in range(S) for b in range(m)]
def x(j, t): k, s, b = j; return f"x_{k}_{s}_{b}_{t}"
# earliest possible start (prunes variables): F(s) >= s; I(s) >= S + (S-1-s); W(s) >= I(s)+1
def est(j):
    k, s, b = j
    if k == "F": return s
    if k == "I": return S + (S - 1 - s)
    return S + (S - 1 - s) + 1
def lst(j):  # latest start so that the rest of its chain fits by T
    k, s, b = j
    if k == "W": return T - 1
    if k == "I": return T - 1 - s - 1 if s > 0 else T - 2  # I(s) then I(s-1)...I(0), W(0)
    return T - 1 - (S - 1 - s) - S - 1  # F(s)..F(S-1), I(S-1)..I(0), W(0)
dom = {j: range(est(j), max(est(j), lst(j)) + 1) for j in jobs}
out = ["Minimize", " obj: 0 x_F_0_0_0", "Subject To"]
c = 0
def add(expr):
    global c; c += 1; out.append(f" c{c}: {expr}")
for j in jobs:
    if not dom[j]: print("infeasible bounds", j); sys.exit(1)
    add(" + ".join(x(j, t) for t in dom[j]) + " = 1")
for r in range(p):
    for t in range(T):
        v = [x(j, t) for j in jobs if rank(j[1]) == r and t in dom[j]]
        if len(v) > 1: add(" + ".join(v) + " <= 1")
def started_by(j, t):  # terms for sum_{tau <= t} x[j,tau]
    return [x(j, tau) for tau in dom[j] if tau <= t]
def prec(a, b):  # b starts at least one slot after a starts
    for t in dom[b]:
        lhs = started_by(b, t); rhs = started_by(a, t - 1)
        if not rhs: add(" + ".join(lhs) + " <= 0"); continue
        add(" + ".join(lhs) + " - " + " - ".join(rhs) + " <= 0")
for s in range(S):
    for b in range(m):
        if s > 0: prec(("F", s - 1, b), ("F", s, b))
        prec(("F", s, b), ("I", s, b))
        if s < S - 1: prec(("I", s + 1, b), ("I", s, b))
        prec(("I", s, b), ("W", s, b))
# symmetry: microbatches numbered by their order at F of stage 0
for b in range(m - 1):
    prec(("F", 0, b), ("F", 0, b + 1))
# memory (x4): F +2 at start, I -1 at end, W -1 at end; level after time t's events <= cap4
for r in range(p):
    for t in range(T):
        terms = []
        for j in jobs:
            k, s, b = j
            if rank(s) != r: continue
            if k == "F": terms += [f"2 {v}" for v in started_by(j, t)]
            else: terms += [f"- {v}" for v in started_by(j, t - 1)]
        if any(not q.startswith("-") for q in terms):
            e = " + ".join(q for q in terms if not q.startswith("-"))
            neg = " ".join(q for q in terms if q.startswith("-"))
            add(f"{e} {neg} <= {cap4}")
out.append("Binary")
for j in jobs:
    for t in dom[j]: out.append(" " + x(j, t))
out.append("End")
open(sys.argv[5], "w").write("\n".join(out) + "\n")
print("jobs", len(jobs), "vars", sum(len(dom[j]) for j in jobs), "cons", c)
