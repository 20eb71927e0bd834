# Offline check, not part of the build or the tests: the question of vshape_ilp.py ("is there a V
# schedule of P ranks and M microbatches that ends within T slots under a memory cap?") as CNF for a
# SAT solver (Debian's cadical: `cadical OUT.cnf`; "s UNSATISFIABLE" means no such schedule exists).
# Same model as vshape_ilp.py: unit slots per chunk action (or the durations given), F(s) after
# F(s-1), I(s) after F(s) and I(s+1), W(s) after I(s), one action at a time per rank, memory in quarters of a microbatch's
# activation (F takes 2 at its start, I and W free 1 each at their end, frees before allocations),
# level <= CAP4 at every slot. Microbatches are numbered by their order at stage 0.
#
#   python3 vshape_sat.py P M T CAP4 OUT.cnf [DF DI DW]
#                                                     write the CNF (and OUT.cnf.jobs for decoding);
#                                                     DF DI DW: a chunk's F, I and W in slots (default
#                                                     1 1 1; T_F=2 T_I=3 T_W=1 per rank is 2 3 1 with
#                                                     a slot of half a unit)
#   python3 vshape_sat.py --decode OUT.cnf SOLVER_OUTPUT SCHEDULE.csv
#                                                     turn a model into a CSV for vshape_check.py
#
# Encoding: order variables y(j, t) = "job j has started by slot t" (monotone in t), a start
# literal per slot for the at-most-one-per-rank rule (a ladder), and for memory two bits per chunk
# and microbatch ("F started and W not ended", "F started and I not ended"), whose sum must stay at
# most CAP4 (a sequential counter).
import sys

if sys.argv[1] == "--decode":
    cnf, solver_out, csv_out = sys.argv[2:5]
    names = {}
    for line in open(cnf + ".jobs"):
        var, job = line.split()
        names[int(var)] = job
    true = set()
    for line in open(solver_out):
        if line.startswith("v "):
            true.update(int(v) for v in line.split()[1:] if int(v) > 0)
    starts = {}
    for var, job in names.items():  # job "k,s,b,t" for y(j, t); the first t that is true is the start
        k, s, b, t = job.split(",")
        key = (k, int(s), int(b))
        if var in true and (key not in starts or int(t) < starts[key]):
            starts[key] = int(t)
    meta = open(cnf + ".jobs.meta").read().split()
    p, lsts = int(meta[0]), {}
    for item in meta[1:]:
        k, s, b, t = item.split(",")
        lsts[(k, int(s), int(b))] = int(t)
    for key, t in lsts.items():
        starts.setdefault(key, t)
    rows = [[] for _ in range(p)]
    for (k, s, b), t in sorted(starts.items(), key=lambda e: e[1]):
        rows[min(s, 2 * p - 1 - s)].append(f"{s}{k}{b}")
    open(csv_out, "w").write("\n".join(",".join(r) for r in rows) + "\n")
    sys.exit(0)

p, m, T, cap4 = (int(a) for a in sys.argv[1:5])
out_path = sys.argv[5]
dur = {"F": 1, "I": 1, "W": 1}
if len(sys.argv) > 6:
    dur = {k: int(v) for k, v in zip("FIW", sys.argv[6:9])}
n = 2 * p
rank = lambda s: s if s < p else n - 1 - s
jobs = [(k, s, b) for k in "FIW" for s in range(n) for b in range(m)]

dF, dI, dW = dur["F"], dur["I"], dur["W"]
# Earliest starts: F(0, b) >= b * dF (stage 0 runs its forwards one after another, in order), then
# the chain.
def est(j):
    k, s, b = j
    if k == "F": return (s + b) * dF
    i = (n + b) * dF + (n - 1 - s) * dI  # after F(n-1, b), then I(n-1) .. I(s+1)
    return i if k == "I" else i + dI
# Latest starts so that the rest of the chain ends by T (it ends with I(0) then W(0)).
def lst(j):
    k, s, b = j
    if k == "W": return T - dW
    if k == "I": return T - dW - (s + 1) * dI
    return T - dW - n * dI - (n - s) * dF

TRUE, FALSE = "T", "F"
nvars = 0
def new_var():
    global nvars
    nvars += 1
    return nvars
clauses = []
def clause(*lits):
    out = []
    for l in lits:
        if l == TRUE: return
        if l == FALSE: continue
        out.append(l)
    clauses.append(out)  # an empty clause makes the formula unsatisfiable, as it should
def neg(l):
    return FALSE if l == TRUE else TRUE if l == FALSE else -l

E = {j: est(j) for j in jobs}
L = {j: lst(j) for j in jobs}
if any(E[j] > L[j] for j in jobs):
    open(out_path, "w").write("p cnf 1 2\n1 0\n-1 0\n")
    open(out_path + ".jobs", "w").write("")
    open(out_path + ".jobs.meta", "w").write(f"{p}\n")
    print("infeasible from the time windows alone")
    sys.exit(0)
Y = {}
names = []
for j in jobs:
    for t in range(E[j], L[j]):
        v = new_var(); Y[(j, t)] = v
        names.append(f"{v} {j[0]},{j[1]},{j[2]},{t}")
def y(j, t):  # j has started by slot t
    if t < E[j]: return FALSE
    if t >= L[j]: return TRUE
    return Y[(j, t)]

for j in jobs:
    for t in range(E[j], L[j] - 1):
        clause(neg(y(j, t)), y(j, t + 1))
def precede(a, b):  # b starts once a has ended
    for t in range(E[b], T):
        clause(neg(y(b, t)), y(a, t - dur[a[0]]))
for s in range(n):
    for b in range(m):
        if s > 0: precede(("F", s - 1, b), ("F", s, b))
        precede(("F", s, b), ("I", s, b))
        if s < n - 1: precede(("I", s + 1, b), ("I", s, b))
        precede(("I", s, b), ("W", s, b))
for b in range(m - 1):
    precede(("F", 0, b), ("F", 0, b + 1))

def at_most(lits, k):  # Sinz's sequential counter
    lits = [l for l in lits if l != FALSE]
    k -= sum(1 for l in lits if l == TRUE)
    lits = [l for l in lits if l != TRUE]
    if k < 0: clause(); return
    if k >= len(lits): return
    if k == 0:
        for l in lits: clause(-l)
        return
    reg = [[new_var() for _ in range(k)] for _ in range(len(lits) - 1)]
    for i, x in enumerate(lits):
        if i < len(lits) - 1:
            clause(-x, reg[i][0])
            if i > 0:
                clause(-reg[i - 1][0], reg[i][0])
                for c in range(1, k):
                    clause(-x, -reg[i - 1][c - 1], reg[i][c])
                    clause(-reg[i - 1][c], reg[i][c])
            else:
                for c in range(1, k): clause(-reg[0][c])
        if i > 0: clause(-x, -reg[i - 1][k - 1])

by_rank = [[j for j in jobs if rank(j[1]) == r] for r in range(p)]
for r in range(p):
    for t in range(T):
        running = []  # the rank runs one action at a time: started by t and not ended by t
        for j in by_rank[r]:
            d = dur[j[0]]
            if not (E[j] <= t <= L[j] + d - 1): continue
            now, before = y(j, t), y(j, t - d)
            if now == TRUE and before == FALSE: running.append(TRUE); continue
            x = new_var()
            clause(neg(now), before, x)
            clause(-x, now); clause(-x, neg(before))
            running.append(x)
        at_most(running, 1)
    for t in range(T):
        bits = []
        for j in by_rank[r]:
            k, s, b = j
            if k != "F": continue
            started = y(j, t)
            if started == FALSE: continue
            for freer in (("W", s, b), ("I", s, b)):
                ended = y(freer, t - dur[freer[0]])
                if ended == TRUE: continue
                if started == TRUE and ended == FALSE: bits.append(TRUE); continue
                a = new_var()
                clause(neg(started), ended, a)
                bits.append(a)
        at_most(bits, cap4)

with open(out_path, "w") as f:
    f.write(f"p cnf {nvars} {len(clauses)}\n")
    f.write("".join(" ".join(map(str, c)) + " 0\n" for c in clauses))
open(out_path + ".jobs", "w").write("\n".join(names) + "\n")
open(out_path + ".jobs.meta", "w").write(
    f"{p}\n" + "\n".join(f"{j[0]},{j[1]},{j[2]},{L[j]}" for j in jobs) + "\n")
print("jobs", len(jobs), "vars", nvars, "clauses", len(clauses))
