# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Member and non-member distributions and ROC curves of the membership statistics."""

import numpy as np
import pandas as pd

from skprivacy.membership import (
    MembershipGeometry,
    audit_reference_sets,
)
from skprivacy.membership._geometry import auc_ignoring_nan, roc_curve_ignoring_nan
from skprivacy.plotting._base import (
    check_fitted,
    draw_distributions,
    get_axes,
    get_axes_grid,
    set_roc_axes,
)

__all__ = ["MembershipDistributionDisplay", "MembershipROCDisplay"]

_FRAME_COLUMNS = ("reference", "statistic", "member", "value")


class MembershipDistributionDisplay:
    """Per-identity statistic distributions of members and non-members.

    One panel per statistic; in each, for every non-member reference set, a
    box (or violin) of the members' and of the reference's non-members'
    per-identity values, with the member-vs-non-member AUC (> 0.5 = members
    score higher; a point estimate). Build it with :meth:`from_estimator` (a
    :class:`~skprivacy.MembershipGeometry` fitted with membership labels),
    :meth:`from_reference_sets` (one member set against several non-member
    references, through
    :func:`~skprivacy.membership.audit_reference_sets`) or :meth:`from_frame`
    (a long-format table, one row per identity, statistic and reference).

    Parameters
    ----------
    frame : pandas.DataFrame
        Long format: ``reference``, ``statistic``, ``member`` (bool) and
        ``value`` (and usually ``identity``), one row per identity,
        statistic and reference.
    auc : pandas.DataFrame
        Member-vs-non-member AUC, indexed by reference, one column per
        statistic.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        One Axes per statistic.
    figure_ : matplotlib Figure
        Figure containing the axes.
    distributions_ : dict of str to dict
        Artists of ``boxplot``/``violinplot`` per statistic.
    results_ : pandas.DataFrame
        Only from :meth:`from_reference_sets`: the
        :func:`~skprivacy.membership.audit_reference_sets` table (AUC,
        DeLong interval and permutation p-value per reference and statistic).

    See Also
    --------
    skprivacy.MembershipGeometry : Computes the statistics.
    skprivacy.membership.audit_reference_sets : One member set against
        several references.

    Notes
    -----
    Each reference is its own comparison: the members' values are those
    computed together with that reference (ProtoCE, for one, depends on the
    identities audited together), so with several references the members'
    distribution is drawn once per reference.

    Examples
    --------
    >>> from skprivacy.datasets import make_membership_embeddings
    >>> from skprivacy import MembershipGeometry
    >>> from skprivacy.plotting import MembershipDistributionDisplay
    >>> X, ids, member = make_membership_embeddings(
    ...     n_members=20, n_nonmembers=20, concentration_gap=0.5, random_state=0)
    >>> mg = MembershipGeometry(random_state=0).fit(X, ids, member=member)
    >>> display = MembershipDistributionDisplay.from_estimator(
    ...     mg, statistics=["pair_cos", "vmf_kappa"])
    >>> len(display.axes_), display.auc.round(2).to_dict("records")
    (2, [{'pair_cos': 0.95, 'vmf_kappa': 0.95}])
    """

    def __init__(self, *, frame, auc):
        self.frame = frame
        self.auc = auc

    def plot(self, ax=None, *, kind="box", **kwargs):
        """Draw one panel per statistic.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            None creates a figure with one panel per statistic; a sequence
            gives one Axes per statistic; a single Axes is used for one
            statistic, or split into one panel per statistic.
        kind : {"box", "violin"}, default="box"
            Box plots or violins.
        **kwargs : dict
            Passed to matplotlib's ``boxplot`` or ``violinplot``.

        Returns
        -------
        display : MembershipDistributionDisplay
            The display, with its artists.
        """
        statistics = list(pd.unique(self.frame["statistic"]))
        references = list(pd.unique(self.frame["reference"]))
        single = len(references) == 1
        self.figure_, self.axes_ = get_axes_grid(
            ax,
            len(statistics),
            figsize=(3.2 * len(statistics), 1.2 + 0.9 * len(references)),
        )
        self.distributions_ = {}
        for ax_, stat in zip(self.axes_, statistics):
            rows = self.frame[self.frame["statistic"] == stat]
            data, labels, colors = [], [], []
            for ref in references:
                sub = rows[rows["reference"] == ref]
                values = sub["value"].to_numpy(dtype=float)
                member = sub["member"].to_numpy(dtype=bool)
                for is_member, color in ((True, "C0"), (False, "C1")):
                    v = values[(member == is_member) & ~np.isnan(values)]
                    who = "members" if is_member else "non-members"
                    prefix = "" if single else f"{ref}: "
                    data.append(v[np.isfinite(v)])
                    labels.append(f"{prefix}{who} (n={len(v)})")
                    colors.append(color)
            self.distributions_[stat] = draw_distributions(
                ax_, data, labels, kind=kind, colors=colors, **kwargs
            )
            if single:
                ax_.set_title(
                    f"{stat}\nAUC {self.auc.loc[references[0], stat]:.2f}",
                    fontsize=10,
                )
            else:
                ax_.set_title(stat, fontsize=10)
                for i, ref in enumerate(references):
                    # The AUC of each reference next to its pair of boxes.
                    ax_.annotate(
                        f"AUC {self.auc.loc[ref, stat]:.2f}",
                        (1.0, len(labels) - 2 * i - 0.5),
                        xycoords=("axes fraction", "data"),
                        ha="right",
                        va="center",
                        fontsize=8,
                        bbox={
                            "boxstyle": "round,pad=0.15",
                            "fc": "white",
                            "alpha": 0.8,
                        },
                    )
            ax_.set_xlabel("value (member-like →)", fontsize=8)
            ax_.grid(axis="x", alpha=0.3)
        # Identical group labels on every panel are shown once, on the first.
        tick_labels = [[t.get_text() for t in a.get_yticklabels()] for a in self.axes_]
        for ax_, labels in zip(self.axes_[1:], tick_labels[1:]):
            if labels == tick_labels[0]:
                ax_.tick_params(labelleft=False)
        return self

    @classmethod
    def from_frame(cls, frame, *, statistics=None, ax=None, **kwargs):
        """Draw a long-format table of per-identity statistics.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``reference``, ``statistic``, ``member`` and ``value``
            (``identity`` is allowed and ignored), one row per identity,
            statistic and reference, e.g. the ``distributions`` returned by
            ``audit_reference_sets(..., return_distributions=True)``
            (:func:`~skprivacy.membership.audit_reference_sets`; its other
            columns are ignored). ``member`` is boolean (or 0/1).
        statistics : list of str, default=None
            Statistics to draw, in panel order; None draws every one in the
            table's order.
        ax : matplotlib Axes or array-like of Axes, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipDistributionDisplay
            The plotted display.

        Examples
        --------
        >>> import pandas as pd
        >>> from skprivacy.plotting import MembershipDistributionDisplay
        >>> frame = pd.DataFrame({
        ...     "reference": ["held-out"] * 4 + ["web"] * 4,
        ...     "statistic": "pair_cos",
        ...     "identity": ["m1", "m2", "n1", "n2"] * 2,
        ...     "member": [True, True, False, False] * 2,
        ...     "value": [0.8, 0.7, 0.75, 0.6, 0.8, 0.7, 0.5, 0.4]})
        >>> display = MembershipDistributionDisplay.from_frame(frame)
        >>> display.auc["pair_cos"].to_dict()
        {'held-out': 0.75, 'web': 1.0}
        """
        missing = set(_FRAME_COLUMNS) - set(frame.columns)
        if missing:
            raise ValueError(
                f"The frame lacks column(s) {sorted(missing)}; expected columns "
                "reference, statistic, identity, member, value (one row per "
                "identity, statistic and reference)."
            )
        member = frame["member"]
        if member.isna().any():
            raise ValueError(
                "The 'member' column has missing values; every row needs a "
                "membership label."
            )
        if not set(pd.unique(member.astype(object))) <= {False, True}:
            raise ValueError(
                "The 'member' column must be boolean (or 0/1); got values "
                f"{sorted(map(repr, pd.unique(member)))[:5]}."
            )
        frame = frame.assign(member=member.astype(bool))
        if statistics is not None:
            statistics = [statistics] if isinstance(statistics, str) else statistics
            unknown = set(statistics) - set(frame["statistic"])
            if unknown:
                raise ValueError(
                    f"Statistic(s) {sorted(unknown)} are not in the frame; it has "
                    f"{sorted(pd.unique(frame['statistic']))}."
                )
            frame = frame[frame["statistic"].isin(statistics)]
            order = {s: i for i, s in enumerate(statistics)}
            frame = frame.sort_values(
                "statistic", key=lambda s: s.map(order), kind="stable"
            )
        auc = (
            frame.groupby(["reference", "statistic"], sort=False)[["member", "value"]]
            .apply(lambda g: auc_ignoring_nan(g["member"], g["value"]))
            .unstack("statistic")
        )
        auc = auc[list(pd.unique(frame["statistic"]))]
        auc = auc.loc[list(pd.unique(frame["reference"]))]
        auc.columns.name = None
        return cls(frame=frame.reset_index(drop=True), auc=auc).plot(ax=ax, **kwargs)

    @classmethod
    def from_reference_sets(
        cls,
        X_members,
        ids_members,
        references,
        *,
        same_domain=None,
        estimator=None,
        statistics=None,
        ax=None,
        **kwargs,
    ):
        """Audit one member set against several references and draw them.

        Runs :func:`~skprivacy.membership.audit_reference_sets` with
        ``return_distributions=True`` and draws, per statistic, the members'
        and each reference's per-identity values with the AUC of that
        comparison.

        Parameters
        ----------
        X_members : array-like of shape (n_member_rows, n_features)
            Probe embeddings of identities known to be in the training set.
        ids_members : array-like of shape (n_member_rows,)
            Their identity labels.
        references : dict of str to tuple (X_ref, ids_ref)
            Named non-member reference sets.
        same_domain : str, default=None
            Name of the same-domain held-out reference, if any; its panels
            are labelled as the membership measurement, the others as
            membership + domain shift.
        estimator : MembershipGeometry, default=None
            Configured auditor (cloned per reference).
        statistics : list of str, default=None
            Statistics to draw; None draws every audited statistic.
        ax : matplotlib Axes or array-like of Axes, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipDistributionDisplay
            The plotted display; ``display.results_`` holds the
            ``audit_reference_sets`` table (AUC, DeLong interval, permutation
            p-value per reference and statistic, fusion included).

        Examples
        --------
        >>> from skprivacy.datasets import make_membership_embeddings
        >>> from skprivacy.plotting import MembershipDistributionDisplay
        >>> kw = dict(n_members=15, n_nonmembers=15, concentration_gap=0.3,
        ...           n_features=16, random_state=0)
        >>> X, ids, m = make_membership_embeddings(**kw)
        >>> Xs, ids_s, _ = make_membership_embeddings(domain_shift=0.5, **kw)
        >>> refs = {"held-out": (X[~m], ids[~m]), "shifted": (Xs[~m], ids_s[~m])}
        >>> display = MembershipDistributionDisplay.from_reference_sets(
        ...     X[m], ids[m], refs, same_domain="held-out",
        ...     statistics=["pair_cos"])
        >>> display.auc.index.tolist()
        ['held-out (membership)', 'shifted (membership + domain shift)']
        """
        results, frame = audit_reference_sets(
            X_members,
            ids_members,
            references,
            same_domain=same_domain,
            estimator=estimator,
            return_distributions=True,
        )
        if same_domain is not None:
            # The role travels with the name, so every panel says which
            # comparison measures membership.
            labels = frame["reference"] + " (" + frame["role"] + ")"
            frame = frame.assign(reference=labels)
        display = cls.from_frame(frame, statistics=statistics, ax=ax, **kwargs)
        display.results_ = results
        return display

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        statistics=None,
        reference_name="non-members",
        ax=None,
        **kwargs,
    ):
        """Draw the statistics of a fitted :class:`~skprivacy.MembershipGeometry`.

        Parameters
        ----------
        estimator : MembershipGeometry
            Fitted with membership labels (``fit(X, y, member=...)``).
        statistics : list of str, default=None
            Statistics to draw; None draws every fitted statistic.
        reference_name : str, default="non-members"
            Name of the non-member set in the frame.
        ax : matplotlib Axes or array-like of Axes, default=None
            See :meth:`plot`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipDistributionDisplay
            The plotted display.
        """
        check_fitted(
            estimator,
            MembershipGeometry,
            "MembershipDistributionDisplay.from_estimator",
        )
        table = estimator.statistics_
        if table["member"].isna().all():
            raise ValueError(
                "The MembershipGeometry was fitted without membership labels; fit "
                "it with fit(X, y, member=member) to compare members and "
                "non-members."
            )
        columns = [c for c in table.columns if c not in {"identity", "member", "k"}]
        frame = table.melt(
            id_vars=["identity", "member"],
            value_vars=columns,
            var_name="statistic",
            value_name="value",
        )
        frame.insert(0, "reference", reference_name)
        return cls.from_frame(frame, statistics=statistics, ax=ax, **kwargs)


class MembershipROCDisplay:
    """ROC curves of membership statistics, on log axes for low false-positive rates.

    One curve per statistic (and the out-of-fold fusion), members called at
    ``score >= t``, with the operating points of
    :attr:`~skprivacy.MembershipGeometry.tpr_at_fpr_` marked. Log axes show
    what the membership literature reads: the TPR at FPR 1e-3 to 1e-1.
    Build it with :meth:`from_estimator` (a fitted
    :class:`~skprivacy.MembershipGeometry`) or :meth:`from_predictions`.

    Parameters
    ----------
    curves : dict of str to (ndarray, ndarray)
        ``{name: (fpr, tpr)}``, every operating point.
    roc_auc : dict of str to float, default=None
        AUC per curve, for the legend.
    n_nonmembers : int, default=None
        Non-member identities; on log axes the FPR axis starts at
        ``1 / (2 n_nonmembers)``, below the smallest non-zero FPR.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the curves.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    lines_ : dict of str to matplotlib Line2D
        The curve of each statistic.
    chance_level_ : matplotlib Line2D
        The diagonal TPR = FPR.

    See Also
    --------
    skprivacy.membership.membership_roc_curve : The operating points.
    MembershipDistributionDisplay : The distributions behind the curves.

    Notes
    -----
    A point with FPR = 0 has no place on a log axis; its TPR is the first
    step drawn at the left edge. With ``n`` non-member identities the
    smallest non-zero empirical FPR is ``1 / n``: below it the curve shows
    no measurement, only the absence of false positives.

    Examples
    --------
    >>> from skprivacy.plotting import MembershipROCDisplay
    >>> display = MembershipROCDisplay.from_predictions(
    ...     [1, 1, 0, 0, 0], {"score": [0.9, 0.4, 0.5, 0.1, 0.2]})
    >>> display.lines_["score"].get_xdata().round(2).tolist()
    [0.0, 0.0, 0.33, 0.33, 0.67, 1.0]
    """

    def __init__(self, *, curves, roc_auc=None, n_nonmembers=None):
        self.curves = curves
        self.roc_auc = roc_auc
        self.n_nonmembers = n_nonmembers

    def plot(self, ax=None, *, log_scale=True, title=None, **kwargs):
        """Draw the curves and the chance diagonal.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        log_scale : bool, default=True
            Logarithmic FPR and TPR axes (low false-positive rates); False
            draws linear axes from 0 to 1.
        title : str, default=None
            Axes title.
        **kwargs : dict
            Passed to ``ax.plot`` for every curve.

        Returns
        -------
        display : MembershipROCDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(ax, figsize=(4.6, 4.2))
        ax = self.ax_
        kwargs.setdefault("drawstyle", "steps-post")
        self.lines_ = {}
        for name, (fpr, tpr) in self.curves.items():
            label = name
            if self.roc_auc and name in self.roc_auc:
                label = f"{name} (AUC {self.roc_auc[name]:.2f})"
            (self.lines_[name],) = ax.plot(fpr, tpr, label=label, **kwargs)
        lo = 1e-4
        if self.n_nonmembers:
            lo = 1.0 / (2.0 * self.n_nonmembers)
        grid = np.geomspace(lo, 1.0, 50) if log_scale else np.array([0.0, 1.0])
        (self.chance_level_,) = ax.plot(grid, grid, ls=":", c="grey", label="chance")
        set_roc_axes(ax, log_scale=log_scale, fpr_min=lo)
        if title is not None:
            ax.set_title(title, fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
        return self

    @classmethod
    def from_predictions(cls, member, scores, *, ax=None, **kwargs):
        """Draw the ROC of each score against membership labels.

        Parameters
        ----------
        member : array-like of shape (n_identities,)
            1 (or True) for member identities.
        scores : dict of str to array-like, or array-like
            One score per identity (higher = member-like), by name.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipROCDisplay
            The plotted display.
        """
        if not isinstance(scores, dict):
            scores = {"score": scores}
        member = np.asarray(member).astype(bool)
        curves, aucs = {}, {}
        for name, score in scores.items():
            fpr, tpr, _ = roc_curve_ignoring_nan(member, score)
            curves[name] = (fpr, tpr)
            aucs[name] = auc_ignoring_nan(member, score)
        display = cls(curves=curves, roc_auc=aucs, n_nonmembers=int((~member).sum()))
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, *, statistics=None, ax=None, **kwargs):
        """Draw the ROCs of a fitted :class:`~skprivacy.MembershipGeometry`.

        Parameters
        ----------
        estimator : MembershipGeometry
            Fitted with membership labels.
        statistics : list of str, default=None
            Curves to draw, from the fitted statistics and ``"fusion"`` (the
            out-of-fold fused scores, ``fusion_scores_``); None draws all.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipROCDisplay
            The plotted display.
        """
        check_fitted(
            estimator, MembershipGeometry, "MembershipROCDisplay.from_estimator"
        )
        if not hasattr(estimator, "fusion_scores_"):
            raise ValueError(
                "The MembershipGeometry was fitted without membership labels; fit "
                "it with fit(X, y, member=member) to draw ROC curves."
            )
        table = estimator.statistics_
        available = [*estimator.auc_.index, "fusion"]
        names = available if statistics is None else list(statistics)
        unknown = sorted(set(names) - set(available))
        if unknown:
            raise ValueError(f"Unknown statistics {unknown}; fitted: {available}.")
        scores = {
            n: estimator.fusion_scores_ if n == "fusion" else table[n].to_numpy(float)
            for n in names
        }
        member = table["member"].to_numpy(dtype=bool)
        return cls.from_predictions(member, scores, ax=ax, **kwargs)
