# Offline companion of vshape_ilp.py: times a V schedule (PyTorch CSV, F/I/W only, V placement)
# under the same model, each action as early as its rank and its inputs allow, and prints its
# length in slots and its peak memory in quarters of a microbatch. A schedule that fits CAP4 in T
# slots shows that vshape_ilp.py's program with that T is feasible, so an infeasible T-1 is meaningful.
#
#   python3 vshape_check.py SCHEDULE.csv P CAP4 [DF DI DW]   (durations in slots, default 1 1 1)
import sys, re
path, p, cap4 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dur = {k: int(v) for k, v in zip("FIW", sys.argv[4:7])} if len(sys.argv) > 4 else {"F": 1, "I": 1, "W": 1}
rows = [ [c for c in l.strip().split(",") if c] for l in open(path) ]
S = 2 * p
end = {}
free = [0] * p
pos = [0] * p
events = {r: [] for r in range(p)}
done = 0; total = sum(len(r) for r in rows)
while done < total:
    progressed = False
    for r in range(p):
        while pos[r] < len(rows[r]):
            m = re.fullmatch(r"(\d+)([FIW])(\d+)", rows[r][pos[r]])
            s, k, b = int(m.group(1)), m.group(2), int(m.group(3))
            deps = []
            if k == "F" and s > 0: deps.append(("F", s - 1, b))
            if k == "I":
                deps.append(("F", s, b))
                if s < S - 1: deps.append(("I", s + 1, b))
            if k == "W": deps.append(("I", s, b))
            if any(d not in end for d in deps): break
            t = max([free[r]] + [end[d] for d in deps])
            d = dur[k]
            end[(k, s, b)] = t + d; free[r] = t + d; pos[r] += 1; done += 1; progressed = True
            events[r].append((t, +2) if k == "F" else (t + d, -1))
    if not progressed: sys.exit("stuck")
peak = 0
for r in range(p):
    level = 0
    for t, d in sorted(events[r], key=lambda e: (e[0], e[1])):  # frees before allocations at one time
        level += d; peak = max(peak, level)
print("makespan slots", max(free), "peak quarters", peak, "cap", cap4, "ok" if peak <= cap4 else "OVER")
