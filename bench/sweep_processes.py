"""CPU of every process of a command (a sweep: driver, loky workers, the assist process,
resource trackers), from /proc, and how many cores they kept busy over time.

    python bench/sweep_processes.py OUT.json exactdp sweep --jobs 2 --out DIR --quiet

Polls /proc every 0.1 s for the command and its descendants (utime + stime of each, so a
process is counted up to its last poll: at most 0.1 s of CPU lost per process) and prints
each process (pid, first/last seen, CPU, command line) and the cores in use per 2 s window;
OUT.json holds the same data.  Linux only.  A worker that loky restarts shows up as a new
LokyProcess-N."""

import os, sys, time, subprocess, json
HZ = os.sysconf("SC_CLK_TCK")
def stat(pid):
    try:
        s = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    r = s.rfind(")")
    f = s[r+2:].split()
    return int(f[1]), int(f[11]) + int(f[12]), int(f[19])  # ppid, utime+stime, starttime
def cmd(pid):
    try:
        return open(f"/proc/{pid}/cmdline").read().replace("\0", " ")[:150]
    except OSError:
        return "?"
t0 = time.time()
p = subprocess.Popen(sys.argv[2:])
procs = {}
timeline = []
last_total = 0
while True:
    now = time.time() - t0
    pids = [int(x) for x in os.listdir("/proc") if x.isdigit()]
    st = {q: stat(q) for q in pids}
    tree = {p.pid}
    changed = True
    while changed:
        changed = False
        for q, v in st.items():
            if v and v[0] in tree and q not in tree:
                tree.add(q); changed = True
    for q in tree:
        v = st.get(q)
        if v is None: continue
        d = procs.setdefault(q, {"cmd": cmd(q), "first": now, "cpu": 0})
        d["cpu"] = v[1] / HZ; d["last"] = now
        if d["cmd"] in ("", "?"): d["cmd"] = cmd(q)
    total = sum(d["cpu"] for d in procs.values())
    timeline.append((round(now, 2), round(total, 2)))
    if p.poll() is not None:
        break
    time.sleep(0.1)
wall = time.time() - t0

import resource
r = resource.getrusage(resource.RUSAGE_CHILDREN)
out = {"wall": wall, "children_cpu_rusage": r.ru_utime + r.ru_stime, "procs": procs, "timeline": timeline}
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(f"wall {wall:.2f}  rusage children cpu {r.ru_utime + r.ru_stime:.2f}")
for q, d in sorted(procs.items(), key=lambda kv: kv[1]["first"]):
    print(f"{q:>8} {d['first']:6.2f}-{d.get('last',0):6.2f} cpu {d['cpu']:7.2f}  {d['cmd'][:110]}")
# utilization per 2s window
w = 2.0; prev = (0, 0); k = 1
line = []
for t, c in timeline:
    if t >= k * w:
        line.append(f"{(c - prev[1]) / (t - prev[0]):.2f}")
        prev = (t, c); k += 1
print("cores busy per 2 s:", " ".join(line))
