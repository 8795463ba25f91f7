"""Out of sample, the lines of tools/waits-bounds.py (oracle B): 10-fold cross-validation grouped by park day
(still not causal: folds use later days), and fitted on 2017 then scored on 2018-19.

usage: python3 tools/waits-bounds-cv.py [DATA_DIR]     (run by tools/waits-bounds)"""
import importlib.util, os, numpy as np
spec = importlib.util.spec_from_file_location('o', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'waits-bounds.py'))
o = importlib.util.module_from_spec(spec); spec.loader.exec_module(o)
rng = np.random.default_rng(0)
tot = {}
for ride in o.RIDES:
    ev = [a for a in o.load(ride) if a['base'] is not None]
    y = np.array([a['m'] for a in ev]); p = np.array([a['base'] for a in ev]); te = np.array([a['test'] for a in ev])
    hour = np.array([a['hour'] for a in ev]); h6 = np.array([sum((h if h >= 5 else h + 24) >= e for e in [9, 10, 17, 19, 21]) for h in hour])
    day = np.array([a['day'].toordinal() for a in ev]); ud = np.unique(day); fold = dict(zip(ud, rng.permutation(len(ud)) % 10))
    f = np.array([fold[d] for d in day])
    for name, g in [('ride', np.zeros(len(y), int)), ('6-bucket', h6), ('hourly', hour)]:
        cv = np.empty(len(y))
        for k in range(10):
            tr, ts = f != k, f == k
            for gg in np.unique(g[ts]):
                s_tr = tr & (g == gg); s_ts = ts & (g == gg)
                a, b = o.lad_line(p[s_tr], y[s_tr]) if s_tr.sum() >= 5 else o.lad_line(p[tr], y[tr])
                cv[s_ts] = a + b * p[s_ts]
        tt = np.empty(te.sum()); pt = p[te]; gt = g[te]
        for gg in np.unique(gt):
            s_tr = (~te) & (g == gg)
            a, b = o.lad_line(p[s_tr], y[s_tr]) if s_tr.sum() >= 5 else o.lad_line(p[~te], y[~te])
            tt[gt == gg] = a + b * pt[gt == gg]
        tot.setdefault(name, []).append((np.abs(cv - y), np.abs(p - y), np.abs(tt - y[te]), np.abs(p[te] - y[te])))
        print('%s %-8s 10-fold-by-day CV MAE %.2f (%+.1f%%) | fit 2017 -> 2018-19 MAE %.2f (%+.1f%%)' % (ride, name,
              o.mae(cv - y), 100 * (o.mae(cv - y) / o.mae(p - y) - 1), o.mae(tt - y[te]), 100 * (o.mae(tt - y[te]) / o.mae(p[te] - y[te]) - 1)))
for name, L in tot.items():
    c = np.concatenate([x[0] for x in L]).mean(); b = np.concatenate([x[1] for x in L]).mean()
    t = np.concatenate([x[2] for x in L]).mean(); bt = np.concatenate([x[3] for x in L]).mean()
    print('pooled %-8s CV %.2f (%+.1f%%) | 2017->2018-19 %.2f (%+.1f%%)' % (name, c, 100 * (c / b - 1), t, 100 * (t / bt - 1)))
