"""Step 4 of a report: the gene-selection evaluation of Sigg & Buhmann (2008, §5.3).

Its references stay here, with the evaluation they belong to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from certpca import evaluate as ev
from certpca import solvers
from certpca.data import Dataset, clustering_classes
from certpca.errors import InputError
from certpca.messages import quiet
from certpca.paths import fit_path
from certpca.reporting.options import GENE_K, GENE_METHOD, GENE_SIZES, N_INIT
from certpca.reporting.saved import GeneRow, GeneSelection, GeneSetTest

GENE_REFS = (
    (
        "Sigg, C. D. & Buhmann, J. M. (2008). Expectation-maximization for sparse and non-negative PCA. "
        "Proceedings of the 25th International Conference on Machine Learning."
    ),
    (
        "Varshavsky, R., Gottlieb, A., Linial, M. & Horn, D. (2006). Novel unsupervised feature filtering of "
        "biological data. Bioinformatics, 22(14), e507-e513."
    ),
    (
        "Ben-Hur, A., Elisseeff, A. & Guyon, I. (2002). A stability based method for discovering structure in "
        "clustered data. Pacific Symposium on Biocomputing, 7, 6-17."
    ),
)
#: the level at which the conclusion calls the selected genes better than random ones
ALPHA = 0.05


def gene_selection_run(
    ds: Dataset,
    *,
    sizes: Sequence[int] = GENE_SIZES,
    featured: int = GENE_K,
    method: str = GENE_METHOD,
    n_init: int = N_INIT,
    seed: int = 0,
    alpha: float = ALPHA,
    step: Callable[[str], None] | None = None,
    start: Callable[[Callable[[], dict]], Callable[[], dict]] | None = None,
) -> GeneSelection:
    """Sigg & Buhmann §5.3 on ``ds`` as prepared: k-means Jaccard of feature subsets.

    The nonnegative sparse components are the warm-started ``method`` path over
    ``sizes`` (plus ``featured``); the CE simple ranking is Varshavsky et al.'s.
    At ``featured`` features the component's genes are tested against random gene sets of the same
    size (:func:`certpca.evaluate.gene_set_test`; the runs over k-means restarts describe the
    initialisation, they are not independent samples to test with).  The test needs only the path:
    ``start(work)`` starts it (a child process beside the rest, reporting/side.py) and returns what gives
    its result; None: it runs here, after the rest.
    """
    if ds.labels is None or ds.is_covariance:
        raise InputError("gene selection needs labelled samples x features data; give `labels=FILE|COLUMN`")
    why = clustering_classes(ds.labels)
    if why:
        raise InputError(f"gene selection cannot score clusterings: {why}")
    if ds.n_features < 2:
        raise InputError(f"gene selection compares subsets of features; the data have {ds.n_features}, give more")
    if not solvers.get(method).nonneg:
        able = ", ".join(name for name, solver in solvers.REGISTRY.items() if solver.nonneg)
        raise InputError(
            f"`method={method!r}` cannot impose nonnegativity, which gene selection needs; use one of {able}"
        )
    dim = ds.n_features
    sizes = sorted({min(int(s), dim) for s in [*sizes, featured] if int(s) >= 1})
    featured = min(int(featured), dim)
    problem = ds.problem()
    done = step or (lambda label: None)
    with quiet() as caught:
        path = fit_path(problem, sizes, method=method, nonneg=True, seed=seed)
    done("gene selection: nonnegative sparse path")
    supports = {c.k: c.support for c in path}
    # the component's genes as the evaluation's table lists them (its rows' features, as text)
    genes = [str(f) for f in supports[featured]]
    ev.load_kmeans()  # before the gene-set test's child is forked, which then shares the compiled step
    tested = (start or (lambda work: work))(partial(ev.gene_set_test, ds, genes, seed=seed))
    nspc = f"nonnegative sparse PC ({method})"
    ce = "CE simple ranking"
    ce_select = ev.ce_selector()
    ce_select(ds, 1)  # rank once (the slow part), then reuse
    done("gene selection: CE ranking")
    frame = ev.gene_selection(
        ds, sizes, selectors={nspc: lambda d, s: supports[s], ce: ce_select}, n_init=n_init, seed=seed
    )
    done("gene selection: k-means x Jaccard")
    rows = [
        GeneRow(
            selector=r.selector,
            size=int(r.size),
            n_features=int(r.n_features),
            mean=float(r.mean),
            sd=float(r.sd),
            min=float(r.min),
            max=float(r.max),
            scores=[float(x) for x in r.scores],
            features=None if r.selector == "full data" else [str(f) for f in r.features],
        )
        for r in frame.itertuples(index=False)
    ]
    result = tested()
    done("gene selection: the selected genes against random gene sets")
    set_test = GeneSetTest(**{f: result[f] for f in GeneSetTest.__dataclass_fields__})
    prep = dict(ds.preprocessing)
    return GeneSelection(
        sizes=sizes,
        featured=featured,
        method=method,
        n_init=n_init,
        seed=seed,
        alpha=alpha,
        n_clusters=int(frame.attrs["n_clusters"]),
        selectors=[nspc, ce],
        preprocessing=prep,
        rows=rows,
        tests=[],
        set_test=set_test,
        conclusion=gene_conclusion(set_test, alpha),
        notes=sorted({str(w.message) for w in caught}),
    )


def gene_conclusion(t: GeneSetTest, alpha: float = ALPHA) -> str:
    """The answer to the user's question, from the gene-set test: do the selected genes separate the
    classes better than as many random genes?"""
    compared = (
        f"k-means on the {t.size} selected genes agrees with the classes at Jaccard {t.statistic:.3f}; "
        f"random sets of {t.size} genes: mean {t.null_mean:.3f}, 95th percentile {t.null_q95:.3f} "
        f"(p = {t.p_value:.3g}, {t.n_sets} random sets); the {t.size} genes of largest variance: "
        f"{t.top_variance:.3f}; all genes: {t.all_features:.3f}"
    )
    if t.p_value <= alpha:
        return f"The selected genes separate the classes better than random genes: {compared}."
    return f"The selected genes separate the classes no better than random genes (at the {alpha:g} level): {compared}."


__all__ = ["GENE_REFS", "gene_conclusion", "gene_selection_run"]
