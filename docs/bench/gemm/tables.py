# Markdown tables of docs/performance.md (GEMM section) from `convgrad bench --json` files:
#   tables.py table|sum|sumop|gemmonly FILE.json...
# table: one row per record; sum: per thread count, geomean of x best (oneDNN best / convgrad)
# with and without the GEMM kernel (ms_without) and counts below 0.8x / 0.5x; sumop: per op.
import json, sys, math, glob
def rows(files):
    out=[]
    for f in files:
        out += json.load(open(f))
    return out
def best(r):
    v=[x for x in (r.get('onednn_plain_ms'), r.get('onednn_blocked_ms')) if x is not None]
    return min(v) if v else None
def table(recs):
    print("| layer | op | tag | thr | GFLOP | kernel | ms | % peak | oneDNN plain / blocked ms | x best | ms w/o gemm | x best w/o |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in recs:
        b=best(r); wo=r.get('ms_without')
        xb = f"{b/r['ms']:.2f}x" if b else "n/a"
        xw = f"{b/wo:.2f}x" if (b and wo) else "n/a"
        pk = f"{100*r['gflops']/r['peak_gflops']:.0f}%" if r.get('peak_gflops') else "n/a"
        pl = r.get('onednn_plain_ms'); bl = r.get('onednn_blocked_ms')
        f3=lambda x: "n/a" if x is None else f"{x:.3f}"
        print(f"| {r['name']} | {r['op']} | {r.get('tag','nxc')} | {r['threads']} | {r['gflop']:.3f} | {r['kernel']} | {r['ms']:.3f} | {pk} | {f3(pl)} / {f3(bl)} | {xb} | {f3(wo)} | {xw} |")
def summary(recs, key=lambda r: (r['threads'],)):
    groups={}
    for r in recs:
        b=best(r)
        if not b: continue
        g=groups.setdefault(key(r), {'n':0,'l':0,'lw':0,'b05':0,'b08':0,'w05':0,'w08':0,'gemm':0})
        x=b/r['ms']; g['n']+=1; g['l']+=math.log(x); g['b05']+=x<0.5; g['b08']+=x<0.8
        g['gemm'] += r['kernel'].startswith('gemm')
        wo=r.get('ms_without')
        if wo:
            xw=b/wo; g['lw']+=math.log(xw); g['w05']+=xw<0.5; g['w08']+=xw<0.8
    print("| group | problems | picked gemm | geomean x best (after) | < 0.8x / < 0.5x (after) | geomean x best (before: gemm disabled) | < 0.8x / < 0.5x (before) |")
    print("|---|---|---|---|---|---|---|")
    for k in sorted(groups):
        g=groups[k]
        print(f"| {' '.join(map(str,k))} | {g['n']} | {g['gemm']} | {math.exp(g['l']/g['n']):.2f}x | {g['b08']} / {g['b05']} | {math.exp(g['lw']/g['n']):.2f}x | {g['w08']} / {g['w05']} |")
if __name__=='__main__':
    mode=sys.argv[1]; files=sys.argv[2:]
    recs=rows(files)
    if mode=='table': table(recs)
    elif mode=='sum': summary(recs)
    elif mode=='sumop': summary(recs, key=lambda r:(r['op'], str(r['threads'])+'t'))
    elif mode=='gemmonly':
        table([r for r in recs if r['kernel'].startswith('gemm')])
