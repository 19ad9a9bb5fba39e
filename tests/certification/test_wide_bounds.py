"""The wide-data bound families against brute-force OPT: random small problems, zero tolerance.

The sweep of tests/certification/test_validity.py covers them with every other bound;
here they meet the problems where they are most likely to be wrong: signed and
nonnegative, factor (N < D) and dense paths, sparse pair lists with a cut τ > 0
(so that the grid starts above zero), many components, and indefinite input.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import certpca.certification.numerics as numerics
import certpca.certification.threshold as threshold
from certpca.certification.sdp_sample import RHO_FACTORS, dabe_sdp_bound
from certpca.certification.threshold import threshold_bound
from certpca.certification.threshold_pairs import collect_pairs
from certpca.clock import Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd


def _problems(seed, n):
    rng = np.random.default_rng(seed)
    for t in range(n):
        D = int(rng.integers(5, 12))
        k = int(rng.integers(1, D))
        nonneg = bool(t % 2)
        if t % 3 == 0:  # wide data held as a factor
            X = rng.standard_normal((int(rng.integers(2, D)), D)) * rng.uniform(0.1, 3, D)
            if t % 6 == 0:
                X = X + rng.uniform(0, 2, D)  # positive correlations, as in expression data
            P = Problem.from_data(X - X.mean(axis=0))
        else:
            C = random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][t % 4])
            if t % 7 == 0:  # block structure: several components above small thresholds
                C = C * (rng.random((D, D)) < 0.4)
                C = (C + C.T) / 2 + D * np.eye(D)
            P = Problem.from_covariance(C)
        yield P, k, nonneg


@pytest.mark.parametrize("seed", [1, 2])
def test_threshold_bound_is_never_below_brute_force(seed):
    bad = []
    for P, k, nonneg in _problems(seed, 150):
        opt, _ = brute_force(P.dense(), k, nonneg)
        # a cut τ > 0 (budget of one pair per feature) exercises the sparse pair list
        for budget in (None, P.dim):
            b = threshold_bound(P, k, nonneg, pair_budget=budget, n_grid=12, n_refine=4)
            if not b.value >= opt:
                bad.append((P.dim, k, nonneg, budget, opt, b.value, b.params))
    assert not bad, bad[:3]


def test_threshold_bound_on_indefinite_input():
    """The inequality needs no PSD matrix: it must hold for a symmetric indefinite C too."""
    rng = np.random.default_rng(9)
    for t in range(60):
        D = 8
        A = rng.standard_normal((D, D))
        C = (A + A.T) / 2
        P = Problem.from_covariance(C)
        for nonneg in (False, True):
            opt, _ = brute_force(C, 3, nonneg)
            assert threshold_bound(P, 3, nonneg).value >= opt
        if t % 12 == 0:  # the sample-space SDP on the eigen-factor, with ‖C − FᵀF‖ added
            opt, _ = brute_force(C, 3, False)
            assert dabe_sdp_bound(P, 3, coarse_iters=5, fine_iters=10).value >= opt


def test_pairs_are_complete_above_the_cut_and_match_dense():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 60)) + rng.uniform(0, 1, 60)
    P = Problem.from_data(X - X.mean(axis=0))
    C = P.dense()
    for nonneg in (False, True):
        i, j, v, tau, err = collect_pairs(P, nonneg, budget=200, block_bytes=8 * 60 * 7)
        key = C if nonneg else np.abs(C)
        iu = np.triu_indices(60, 1)
        expect = set(zip(*[a[key[iu] > tau + 1e-12] for a in iu]))
        got = set(zip(i.tolist(), j.tolist()))
        assert expect <= got
        assert np.all(np.diff(v if nonneg else np.abs(v)) <= 0)  # sorted by decreasing key
        assert np.max(np.abs(C[i, j] - v)) <= err
        assert tau > 0


def test_threshold_beats_dspca_dual_on_block_structure():
    """Two strongly correlated blocks, weak noise between: components make the bound tight."""
    rng = np.random.default_rng(4)
    D = 40
    z = rng.standard_normal((30, 2))
    X = np.concatenate(
        [z[:, :1] + 0.3 * rng.standard_normal((30, 20)), z[:, 1:] + 0.3 * rng.standard_normal((30, 20))], axis=1
    )
    P = Problem.from_data(X - X.mean(axis=0))
    from certpca.certification import dspca_dual_bound

    a = threshold_bound(P, 10, False).value
    b = dspca_dual_bound(P, 10, False).value
    opt_lower = max(np.linalg.eigvalsh(P.dense()[np.ix_(s, s)])[-1] for s in (range(10), range(20, 30)))
    assert opt_lower <= a < b
    assert D == P.dim


def test_sample_space_sdp_is_never_below_brute_force():
    """Also when a target of 0 stops every refining search at its first dual point (a certificate's best
    bound so far ends those that cannot beat it)."""
    bad = []
    for P, k, nonneg in _problems(5, 90):
        opt, _ = brute_force(P.dense(), k, nonneg)
        b = dabe_sdp_bound(P, k, nonneg, coarse_iters=6, fine_iters=12)
        first = dabe_sdp_bound(P, k, nonneg, coarse_iters=6, fine_iters=12, target=0.0)
        if not (b.value >= opt and first.value >= opt and b.params["stopped_at_target"] == 0):
            bad.append((P.dim, k, nonneg, opt, b.value, first.value, b.params))
        coarse = 6 * len(RHO_FACTORS)  # the coarse pass runs in full, then one step per refining search
        if not (
            first.params["stopped_at_target"] > 0
            and first.params["iterations"] <= coarse + first.params["stopped_at_target"]
        ):
            bad.append((P.dim, k, nonneg, first.params))
    assert not bad, bad[:3]


def test_a_target_above_the_sample_space_sdp_bound_leaves_it_unchanged():
    """Searches that stop at a target above the bound's value must not cost the search that makes it
    (cutting the warm-started coarse searches short once did: leukemia log2 signed 1.0279 for 1.0201)."""
    rng = np.random.default_rng(4)
    worse = []
    for t in range(16):
        r, D = int(rng.integers(4, 15)), int(rng.integers(30, 120))
        X = rng.standard_normal((r, D)) * rng.uniform(0.1, 3, D)
        if t % 2:  # one strong common factor, as in expression data
            X = X + rng.standard_normal((r, 1)) * rng.uniform(0, 1.5, D)
        P = Problem.from_data(X - X.mean(axis=0))
        k = int(rng.integers(2, D // 2))
        full = dabe_sdp_bound(P, k)
        for above in (1.001, 1.05, 1.3):
            b = dabe_sdp_bound(P, k, target=above * full.value)
            if b.value > full.value:
                worse.append((t, above, b.value / full.value, b.params["stopped_at_target"]))
    assert not worse, worse


def test_sample_space_sdp_improves_on_its_starting_point():
    """The Frank–Wolfe dual points must beat the fallback Y_i = (B_i)₊ of the dabe bound's family."""
    from certpca.certification import dabe_bound

    rng = np.random.default_rng(8)
    X = rng.standard_normal((12, 80)) * rng.uniform(0.2, 2, 80)
    X[:, :10] += 2 * rng.standard_normal((12, 1))
    P = Problem.from_data(X - X.mean(axis=0))
    assert dabe_sdp_bound(P, 10).value < dabe_bound(P, 10).value


def test_default_certificate_uses_the_wide_data_families():
    """Without a bound list, a wide problem gets threshold and dabe_sdp, named in one vocabulary."""
    from certpca.certification import REGISTRY, certify_vector, default_bounds

    rng = np.random.default_rng(12)
    X = rng.standard_normal((10, 300)) * rng.uniform(0.5, 2, 300)
    X[:, :20] += 3 * rng.standard_normal((10, 1))
    P = Problem.from_data(X - X.mean(axis=0))
    assert P.uses_factor
    for nonneg in (False, True):
        names = default_bounds(P, nonneg)
        assert "threshold" in names and "dabe_sdp" in names
        w = np.zeros(300)
        w[:20] = 1.0
        c = certify_vector(P, w, 20, nonneg, budget=30)
        d = c.to_dict()
        got = {b["name"] for b in d["bounds"]}
        assert got | set(d["skipped"]) <= set(REGISTRY) and d["winner"] in got
        assert {"threshold", "dabe_sdp"} <= got | set(d["skipped"])
        costs = [REGISTRY[b.name].cost for b in c.bounds if REGISTRY[b.name].probe is None]
        assert costs == sorted(costs)  # cheapest first (a bound with a first try sits where it ran)


def test_dense_small_problems_leave_the_sample_sdp_to_cvxpy():
    from certpca.certification import default_bounds

    P = Problem.from_covariance(random_psd(np.random.default_rng(1), 30, "wishart"))
    assert "dabe_sdp" not in default_bounds(P, False) and "threshold" in default_bounds(P, False)


def _counting_cuts(monkeypatch):
    """Wrap the threshold bound's component visit and its rank-2 sweeps: the evaluations of ρ stopped at their
    cutoff (by pass: rank-2 or not, estimate or not) and the sweeps stopped at their target are counted."""
    counts = {"sweeps": 0}
    visit, sweep = threshold._ub_components, threshold.spannogram

    def counted_visit(*args, **kw):
        value, info = visit(*args, **kw)
        if info["cut"]:
            phase = ("rank2" if args[8] is not None else "plain", "estimate" if args[9] else "bound")
            counts[phase] = counts.get(phase, 0) + 1
        return value, info

    def counted_sweep(*args, **kw):
        res = sweep(*args, **kw)
        counts["sweeps"] += res.truncated == "above target"
        return res

    monkeypatch.setattr(threshold, "_ub_components", counted_visit)
    monkeypatch.setattr(threshold, "spannogram", counted_sweep)
    return counts


def _uncut(monkeypatch):
    """The threshold bound with no cutoff: every ρ evaluated to its end, every rank-2 sweep complete."""
    visit, sweep = threshold._ub_components, threshold.spannogram
    monkeypatch.setattr(threshold, "_ub_components", lambda *a, **kw: visit(*a, **{**kw, "cap": np.inf}))
    monkeypatch.setattr(threshold, "spannogram", lambda *a, target=None, **kw: sweep(*a, **kw))


@pytest.mark.parametrize(("estimated", "rank2"), [(False, False), (False, True), (True, True)])
def test_cut_evaluations_give_the_uncut_bound(monkeypatch, estimated, rank2):
    """An evaluation of ρ stops once it is above the value it must beat (the best bound so far, or for the
    estimates the ESTIMATE_FINALISTS-th smallest), a rank-2 sweep once its bound cannot lower its component
    enough: work that cannot change the result.  With an allotment that never runs out, the bound equals the
    one computed with no cut at all, exactly, and stays above brute force; the cuts do fire (counted), in
    every pass: the plain search, the rank-2 pass and (on estimates, from LANCZOS_MIN lowered to 2) the
    finalists' bounds.  Without the rank-2 pass too, which would hide a wrong cut of the plain search by
    re-evaluating its points."""
    if estimated:
        for module in (numerics, threshold):
            monkeypatch.setattr(module, "LANCZOS_MIN", 2)
    rows = []
    for seed in (3, 4):
        for P, k, nonneg in _problems(seed, 60):
            opt, _ = brute_force(P.dense(), k, nonneg)
            rows.append((P, k, nonneg, opt))
    options = {"n_grid": 12, "n_refine": 4, "rank2": rank2}
    with monkeypatch.context() as m:
        counts = _counting_cuts(m)
        cut = [threshold_bound(_fresh(P), k, nn, time_limit=Work(1e12), **options) for P, k, nn, _ in rows]
    with monkeypatch.context() as m:
        _uncut(m)
        full = [threshold_bound(_fresh(P), k, nn, time_limit=Work(1e12), **options) for P, k, nn, _ in rows]
    bad = [(r[0].dim, *r[1:], a.value, b.value) for r, a, b in zip(rows, cut, full) if not a.value == b.value >= r[3]]
    assert not bad, bad[:3]
    assert sum(b.params["evaluations_cut"] for b in cut) > 0 == sum(b.params["evaluations_cut"] for b in full)
    assert counts["sweeps"] > 0 or not rank2, counts
    if estimated:
        passes = [("plain", "estimate"), ("rank2", "estimate"), ("rank2", "bound")]
    else:
        passes = [("plain", "bound"), ("rank2", "bound")] if rank2 else [("plain", "bound")]
    assert all(counts.get(p, 0) > 0 for p in passes), counts


def _fresh(P):
    """The same problem without the memo of earlier bounds."""
    return Problem(factor=P.factor()) if P.uses_factor else Problem.from_covariance(P.dense())


@pytest.mark.parametrize("estimate", [False, True])
def test_component_visit_stops_exactly_above_its_cap(estimate):
    """The visit of the components at one ρ with a cap returns the uncut maximum, to the last bit, when that is
    at most the cap, and inf (stopped) when it is above — also at the cap itself and one float below it, with
    the rank-2 sweeps (which stop at the cap or at their component's other bounds) on."""
    rng = np.random.default_rng(11)
    checked = 0
    for t in range(40):
        D = int(rng.integers(6, 13))
        C = random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][t % 4])
        k, nonneg = int(rng.integers(2, D - 2)), bool(t % 2)
        off = C[np.triu_indices(D, 1)]
        rho = float(np.quantile(off if nonneg else np.abs(off), rng.uniform(0.2, 0.8)))
        M = np.where(C > rho, C - rho, 0.0) if nonneg else np.sign(C) * np.maximum(np.abs(C) - rho, 0.0)
        i, j = np.nonzero(np.triu(M, 1))
        n_comp, labels = connected_components(sp.coo_matrix((np.ones(len(i)), (i, j)), shape=(D, D)), directed=False)
        args = (labels, n_comp, i, j, M[i, j], np.diag(C).copy(), k, threshold.DENSE_COMPONENT_MAX, nonneg)

        def visit(cap, args=args):
            return threshold._ub_components(*args, estimate=estimate, cap=cap)[0]

        full = visit(np.inf)
        for cap in [full, np.nextafter(full, -np.inf), *(full * rng.uniform(0.8, 1.2, 4))]:
            assert visit(cap) == (full if full <= cap else np.inf), (t, cap, full)
            checked += 1
    assert checked == 240


def test_the_level_of_a_cut_is_the_cutoff_with_its_margins():
    """_cap_for(cutoff) is a level of max_K ub_k(M_KK) whose value (A) is above the cutoff (so a ρ stopped
    there is above it), and by no more than the relative margins of (A) (so little is left uncut)."""
    rng = np.random.default_rng(2)
    for _ in range(2000):
        scale = 10.0 ** rng.integers(-12, 12)
        cutoff, spread, diag_err = scale * rng.uniform(-1, 3), scale * rng.uniform(0, 2), scale * 1e-14
        level = threshold._cap_for(cutoff, spread, diag_err)
        value = threshold._value_at(level, spread, diag_err)
        assert cutoff < value <= cutoff + 1e-8 * (abs(cutoff) + spread)
        assert threshold._value_at(level + 1e-6 * (abs(level) + scale), spread, diag_err) > cutoff  # nondecreasing
