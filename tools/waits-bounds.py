"""Upper bounds for the wait estimator's target (issue "Crowd-sourced waits": MAE at least 30 % below posted).

Non-causal "oracles" that may look at the future or fit on all the data, on the TouringPlans Animal
Kingdom data: if even they cannot beat the posted wait by 30 %, no estimator that only uses earlier
evidence can. Wait-time data courtesy of TouringPlans.com.

usage: tools/waits-bounds [--shared DIR]      (python3 + numpy; about a minute on one core)

Evaluation set = the one `coasterlife waits replay` scores:
  * every row with SACTMIN, park day = `date` column;
  * exact duplicates (same datetime string AND same SACTMIN) dropped after the first;
  * SACTMIN > 400 dropped (data errors: 1171, 2911, 4338, 47897 on AK86);
  * kept only if a valid (non -999) SPOSTMIN exists on the same park day strictly before the actual's
    timestamp (that latest value is the "posted" baseline).
Oracles: A = median of other same-day actuals within ±15/30/60 min, future included; B = least
absolute deviations line a + b·posted per ride (and per hour) fitted on all rows, the scored one
included; C = the best blend of A and B chosen in-sample. Noise floor: pairs of actuals that started
within 5 minutes of each other (half their mean difference is a strict lower bound for any
predictor that uses only information the two riders share).
"""
import csv, datetime as dt, bisect, collections, math, sys
import numpy as np

D = (sys.argv[1].rstrip('/') if len(sys.argv) > 1 else '../shared/data') + '/touringplans-animal-kingdom-waits/'
RIDES = {'AK85': "Na'vi River Journey", 'AK86': 'Flight of Passage'}
EPOCH = dt.datetime(1970, 1, 1)
CAP = 400
TEST_START = (dt.datetime(2018, 1, 1) - EPOCH).total_seconds() / 60


def tmin(s):
    return (dt.datetime.strptime(s, '%Y-%m-%d %H:%M:%S') - EPOCH).total_seconds() / 60.0


def load(ride):
    posted = collections.defaultdict(list)
    acts, seen = [], set()
    for idx, r in enumerate(csv.DictReader(open(D + ride + '.csv'))):
        t = tmin(r['datetime']); day = dt.datetime.strptime(r['date'], '%m/%d/%Y').date()
        if r['SPOSTMIN']:
            v = float(r['SPOSTMIN'])
            if v != -999: posted[day].append((t, idx, v))
        elif r['SACTMIN']:
            m = float(r['SACTMIN']); key = (r['datetime'], m)
            if key in seen: continue
            seen.add(key)
            if m > CAP: continue
            acts.append(dict(t=t, m=m, day=day, hour=int(r['datetime'][11:13])))
    P = {}
    for day, l in posted.items():
        l.sort(); P[day] = ([x[0] for x in l], [x[2] for x in l])
    acts.sort(key=lambda a: a['t'])
    for a in acts:
        a['base'] = a['base_incl'] = None
        if a['day'] in P:
            ts, vs = P[a['day']]
            i = bisect.bisect_left(ts, a['t']) - 1           # strictly before (causal protocol)
            if i >= 0: a['base'] = vs[i]
            j = bisect.bisect_right(ts, a['t']) - 1          # at or before
            if j >= 0: a['base_incl'] = vs[j]
        a['test'] = a['t'] >= TEST_START
    return acts


def mae(x): return float(np.mean(np.abs(x)))


def lad_line(p, y, bgrid=np.arange(-0.5, 3.0001, 0.005)):
    """in-sample least-absolute-deviation a+b*p by grid over b, exact median for a."""
    if len(y) == 0: return 0.0, 1.0
    R = y[None, :] - bgrid[:, None] * p[None, :]
    A = np.median(R, axis=1)
    L = np.abs(R - A[:, None]).mean(axis=1)
    k = int(np.argmin(L)); return float(A[k]), float(bgrid[k])


def linmap(p, y, groups):
    """in-sample LAD per group; returns fitted values"""
    out = np.empty_like(y)
    for g in np.unique(groups):
        s = groups == g; a, b = lad_line(p[s], y[s]); out[s] = a + b * p[s]
    return out


def neighbours(acts_all, a, W, mode):
    """median of OTHER actuals same ride & park day; mode 'both': |dt|<=W (future incl.);
    'started': started in [t-W, t) or same minute (ignores whether result is known yet);
    'known': result known (t_j + m_j) strictly before t and started within W before."""
    vals = []
    for b in acts_all:
        if b is a or b['day'] != a['day']: continue
        d = b['t'] - a['t']
        if mode == 'both' and abs(d) <= W: vals.append(b['m'])
        elif mode == 'started' and -W <= d <= 0: vals.append(b['m'])
        elif mode == 'known' and -W <= d and b['t'] + b['m'] < a['t']: vals.append(b['m'])
    return float(np.median(vals)) if vals else None


def main():
    tables = {}
    noise = {}
    for ride in RIDES:
        acts_all = load(ride)
        byday = collections.defaultdict(list)
        for a in acts_all: byday[a['day']].append(a)
        ev = [a for a in acts_all if a['base'] is not None]
        y = np.array([a['m'] for a in ev]); p = np.array([a['base'] for a in ev])
        pin = np.array([a['base_incl'] for a in ev])
        hour = np.array([a['hour'] for a in ev]); test = np.array([a['test'] for a in ev])
        h6 = np.array([sum((h if h >= 5 else h + 24) >= e for e in [9, 10, 17, 19, 21]) for h in hour])
        cols = dict(y=y, posted=p, posted_incl=pin, test=test, hour=hour, h6=h6,
                    t=np.array([a['t'] for a in ev]), day=np.array([a['day'].toordinal() for a in ev]))
        for W in [15, 30, 60]:
            nb = [neighbours(byday[a['day']], a, W, 'both') for a in ev]
            cols['hasnb%d' % W] = np.array([v is not None for v in nb])
            cols['nb%d' % W] = np.array([v if v is not None else a['base'] for v, a in zip(nb, ev)])
        for mode in ['started', 'known']:
            nb = [neighbours(byday[a['day']], a, 30, mode) for a in ev]
            cols['%s30' % mode] = np.array([v if v is not None else a['base'] for v, a in zip(nb, ev)])
            cols['has%s30' % mode] = np.array([v is not None for v in nb])
        tables[ride] = cols
        # noise: pairs of distinct (non-duplicate) reports, same park day, starts within 5 min
        d0, d5, pm = [], [], []
        for day, l in byday.items():
            for i in range(len(l)):
                for j in range(i + 1, len(l)):
                    g = l[j]['t'] - l[i]['t']
                    if g > 5: break
                    d5.append(abs(l[i]['m'] - l[j]['m'])); pm.append((l[i]['m'] + l[j]['m']) / 2)
                    if g == 0: d0.append(abs(l[i]['m'] - l[j]['m']))
        noise[ride] = dict(d5=np.array(d5), d0=np.array(d0), pm=np.array(pm))

    splits = {'all': lambda c: np.ones(len(c['y']), bool), '2017 (train)': lambda c: ~c['test'],
              '2018-19 (test)': lambda c: c['test']}
    out = []
    for sname, sf in splits.items():
        out.append('\n### Split: %s\n' % sname)
        out.append('| ride | n | posted MAE | A ±15 | A ±30 | A ±60 | B ride-only | B 6-bucket | B hourly | C (±30 & B hourly, w) | C2 LAD(posted,nb30) hourly |')
        out.append('|---|---|---|---|---|---|---|---|---|---|---|')
        pooled = collections.defaultdict(list)
        extra = []
        for ride, c in tables.items():
            s = sf(c); y = c['y'][s]; p = c['posted'][s]
            base = mae(p - y)
            res = {}
            for W in [15, 30, 60]:
                res['A%d' % W] = c['nb%d' % W][s]
            res['Bride'] = linmap(p, y, np.zeros(len(y)))
            res['B6'] = linmap(p, y, c['h6'][s])
            res['Bhour'] = linmap(p, y, c['hour'][s])
            nb = c['nb30'][s]; has = c['hasnb30'][s]
            best = None
            for w in np.arange(0, 1.0001, 0.1):
                e = np.where(has, w * nb + (1 - w) * res['Bhour'], res['Bhour'])
                m_ = mae(e - y)
                if best is None or m_ < best[0]: best = (m_, w, e)
            res['C'] = best[2]; wC = best[1]
            # C2: in-sample LAD with both posted & neighbour median as regressors, per hour (rows w/o nb: Bhour)
            e2 = res['Bhour'].copy()
            for h in np.unique(c['hour'][s]):
                sel = (c['hour'][s] == h) & has
                if sel.sum() < 3: continue
                X = np.c_[np.ones(sel.sum()), p[sel], nb[sel]]; yy = y[sel]; wt = np.ones(len(yy))
                for _ in range(60):
                    Wt = np.sqrt(wt); beta = np.linalg.lstsq(X * Wt[:, None], yy * Wt, rcond=None)[0]
                    wt = 1 / np.maximum(np.abs(yy - X @ beta), 0.25)
                e2[sel] = X @ beta
            res['C2'] = e2
            res['started30'] = c['started30'][s]; res['known30'] = c['known30'][s]
            # D: B hourly + w * median residual (y - Bhour) of OTHER same-day actuals in this split;
            #    'D' uses all of them (incl. future), 'Dk' only those whose result was known (t_j+m_j) before t_i.
            r = y - res['Bhour']; t = c['t'][s]; m = y; day = c['day'][s]
            idx = collections.defaultdict(list)
            for i, d_ in enumerate(day): idx[d_].append(i)
            corrD = np.zeros(len(y)); corrK = np.zeros(len(y)); hasD = np.zeros(len(y), bool); hasK = np.zeros(len(y), bool)
            for i in range(len(y)):
                o = [j for j in idx[day[i]] if j != i]
                if o: corrD[i] = np.median(r[o]); hasD[i] = True
                ok = [j for j in o if t[j] + m[j] < t[i]]
                if ok: corrK[i] = np.median(r[ok]); hasK[i] = True
            for key, corr in [('D', corrD), ('Dk', corrK)]:
                best = None
                for w in np.arange(0, 1.0001, 0.1):
                    e = res['Bhour'] + w * corr; m_ = mae(e - y)
                    if best is None or m_ < best[0]: best = (m_, w, e)
                res[key] = best[2]; res[key + 'w'] = best[1]
            cov = c['hasnb30'][s]
            f = lambda k: '%.2f (%+.1f%%)' % (mae(res[k] - y), 100 * (mae(res[k] - y) - base) / base)
            out.append('| %s %s | %d | %.2f | %s | %s | %s | %s | %s | %s | %s w=%.1f | %s |' % (
                ride, RIDES[ride], len(y), base, f('A15'), f('A30'), f('A60'), f('Bride'), f('B6'), f('Bhour'),
                f('C'), wC, f('C2')))
            extra.append('%s: A ±30 on the %d rows that have a neighbour: %.2f vs posted %.2f (%+.1f%%); D (B hourly + same-day median residual of all other actuals, w=%.1f, day coverage %.1f%%) %s; Dk (same but only residuals known before t, w=%.1f, coverage %.1f%%) %s' % (
                ride, cov.sum(), mae(res['A30'][cov] - y[cov]), mae(p[cov] - y[cov]), 100 * (mae(res['A30'][cov] - y[cov]) / mae(p[cov] - y[cov]) - 1),
                res['Dw'], 100 * hasD.mean(), f('D'), res['Dkw'], 100 * hasK.mean(), f('Dk')))
            del res['Dw'], res['Dkw']
            for k, v in res.items(): pooled[k].append(np.abs(v - y))
            pooled['base'].append(np.abs(p - y))
            extra.append('%s: neighbour coverage ±15 %.1f%%, ±30 %.1f%%, ±60 %.1f%%; causal-ish ±30: started-before %.2f (%+.1f%%, cov %.1f%%), result-known-before %.2f (%+.1f%%, cov %.1f%%); posted at-or-before (inclusive) MAE %.2f' % (
                ride, 100 * c['hasnb15'][s].mean(), 100 * c['hasnb30'][s].mean(), 100 * c['hasnb60'][s].mean(),
                mae(res['started30'] - y), 100 * (mae(res['started30'] - y) - base) / base, 100 * c['hasstarted30'][s].mean(),
                mae(res['known30'] - y), 100 * (mae(res['known30'] - y) - base) / base, 100 * c['hasknown30'][s].mean(),
                mae(c['posted_incl'][s] - y)))
        P = {k: np.concatenate(v) for k, v in pooled.items()}; base = P['base'].mean()
        g = lambda k: '%.2f (%+.1f%%)' % (P[k].mean(), 100 * (P[k].mean() - base) / base)
        out.append('| **pooled** | %d | %.2f | %s | %s | %s | %s | %s | %s | %s (per-ride w) | %s |' % (
            len(P['base']), base, g('A15'), g('A30'), g('A60'), g('Bride'), g('B6'), g('Bhour'), g('C'), g('C2')))
        out.append('')
        out += ['- ' + e for e in extra]
        out.append('- pooled causal-ish ±30: started-before %s, result-known-before %s' % (g('started30'), g('known30')))
        out.append('- pooled D (B hourly + clairvoyant same-day residual) %s; Dk (B hourly + residuals known before t) %s' % (g('D'), g('Dk')))

    out.append('\n### Noise floor (same ride, same park day, two distinct reports starting ≤5 min apart)\n')
    out.append('| ride | pairs | mean abs diff | median abs diff | same-minute pairs (mean abs diff) | floor diff/2 (hard bound) | floor diff/√2 (Gaussian) | floor diff/1.5 (Laplace) | posted MAE (all) | max improvement at diff/2 · √2 · 1.5 |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    allb = []
    tot = collections.defaultdict(list)
    for ride in RIDES:
        n = noise[ride]; md = n['d5'].mean(); b = mae(tables[ride]['posted'] - tables[ride]['y'])
        tot['d5'].append(n['d5']); tot['d0'].append(n['d0'])
        out.append('| %s | %d | %.2f | %.1f | %d (%.2f) | %.2f | %.2f | %.2f | %.2f | %.0f%% · %.0f%% · %.0f%% |' % (
            ride, len(n['d5']), md, np.median(n['d5']), len(n['d0']), n['d0'].mean() if len(n['d0']) else float('nan'),
            md / 2, md / math.sqrt(2), md / 1.5, b, 100 * (1 - md / 2 / b), 100 * (1 - md / math.sqrt(2) / b), 100 * (1 - md / 1.5 / b)))
    # pooled floor: weight each ride's per-pair floor by its number of evaluated actuals
    nE = {r: len(tables[r]['y']) for r in RIDES}; N = sum(nE.values())
    bp = sum(mae(tables[r]['posted'] - tables[r]['y']) * nE[r] for r in RIDES) / N
    mdp = sum(noise[r]['d5'].mean() * nE[r] for r in RIDES) / N
    out.append('| pooled (weighted by eval n) | %d | %.2f | | | %.2f | %.2f | %.2f | %.2f | %.0f%% · %.0f%% · %.0f%% |' % (
        sum(len(noise[r]['d5']) for r in RIDES), mdp, mdp / 2, mdp / math.sqrt(2), mdp / 1.5, bp,
        100 * (1 - mdp / 2 / bp), 100 * (1 - mdp / math.sqrt(2) / bp), 100 * (1 - mdp / 1.5 / bp)))
    txt = '\n'.join(out)
    print(txt)


if __name__ == '__main__':
    main()
