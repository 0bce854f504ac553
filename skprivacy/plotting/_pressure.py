# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Re-identification pressure per release stage (cumulative and single)."""

import numpy as np
import pandas as pd

from skprivacy.plotting._base import check_fitted, get_axes
from skprivacy.pressure import RenyiPressure

__all__ = ["PressureStagesDisplay"]

_PROBABILITIES = {"p_guess", "guessing_bound", "top1_accuracy"}


def _ceiling(results, measure):
    # vRPI = log N - H_alpha(U|Z) <= log N (N outcomes); probabilities <= 1.
    if measure in {"vrpi", "vrpi_prior"} and "n_outcomes" in results:
        return float(np.log(results["n_outcomes"].max()))
    if measure in _PROBABILITIES:
        return 1.0
    return None


def _alpha_text(alpha):
    return "inf" if np.isinf(alpha) else f"{alpha:g}"


class PressureStagesDisplay:
    """Pressure measure of every release stage, cumulative and single.

    For each attacker and Rényi order, the measure (vRPI by default) of the
    cumulative states :math:`Z_{1:t}` as a line with ± one standard
    deviation over repeats, and of each release :math:`Z_t` alone as crosses,
    with the ceiling ``log N`` for vRPI (1 for probabilities). Build it with
    :meth:`from_estimator` (a fitted :class:`~skprivacy.RenyiPressure`) or
    :meth:`from_results` (its ``results_`` or a
    :func:`~skprivacy.pressure_ladder` table). All values are plug-in point
    estimates for the given attackers.

    Parameters
    ----------
    stages : pandas.DataFrame
        Tidy table, one row per (series, kind, t): ``series`` (legend label),
        ``kind`` (``"cumulative"`` or ``"single"``), ``t``, ``label`` (tick
        label of stage ``t``), ``value`` and ``std`` (NaN with one repeat).
    measure : str, default="vrpi"
        Name of the measure (axis label).
    ceiling : float or None, default=None
        Horizontal reference line.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the stages.
    figure_ : matplotlib Figure
        Figure containing ``ax_``.
    lines_ : dict of str to matplotlib ErrorbarContainer
        Cumulative curve of each series.
    single_markers_ : dict of str to matplotlib Line2D
        Single-release markers of each series (empty when not drawn).
    ceiling_line_ : matplotlib Line2D or None
        The ceiling.

    See Also
    --------
    skprivacy.RenyiPressure : Computes the stages.
    skprivacy.pressure_ladder : Several attackers on the same splits.

    Examples
    --------
    >>> from skprivacy.datasets import make_identity_embeddings
    >>> from skprivacy import RenyiPressure
    >>> from skprivacy.plotting import PressureStagesDisplay
    >>> X, ids = make_identity_embeddings(8, 10, 16, random_state=0)
    >>> audit = RenyiPressure(releases=[slice(0, 8), slice(8, 16)],
    ...                       random_state=0).fit(X, ids)
    >>> display = PressureStagesDisplay.from_estimator(audit, alpha=2)
    >>> [t.get_text() for t in display.ax_.get_xticklabels()]
    ['Z1', 'Z1+Z2']
    """

    def __init__(self, *, stages, measure="vrpi", ceiling=None):
        self.stages = stages
        self.measure = measure
        self.ceiling = ceiling

    def plot(self, ax=None, *, show_single=True, title=None):
        """Draw the stages.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        show_single : bool, default=True
            Also mark each release alone.
        title : str, default=None
            Axes title; None uses "Pressure by release stage".

        Returns
        -------
        display : PressureStagesDisplay
            The display, with its artists.
        """
        # matplotlib is imported on the first figure only (an optional view).
        from matplotlib.lines import Line2D

        self.figure_, self.ax_ = get_axes(ax, figsize=(5.6, 3.6))
        ax = self.ax_
        self.lines_, self.single_markers_ = {}, {}
        stages = self.stages
        for series in pd.unique(stages["series"]):
            rows = stages[stages["series"] == series]
            cum = rows[rows["kind"] == "cumulative"].sort_values("t")
            std = cum["std"].to_numpy(dtype=float)
            self.lines_[series] = ax.errorbar(
                cum["t"].to_numpy(dtype=float),
                cum["value"].to_numpy(dtype=float),
                yerr=std if np.isfinite(std).any() else None,
                marker="o",
                capsize=3,
                label=series,
            )
            color = self.lines_[series].lines[0].get_color()
            single = rows[rows["kind"] == "single"].sort_values("t")
            if show_single and len(single):
                (self.single_markers_[series],) = ax.plot(
                    single["t"].to_numpy(dtype=float),
                    single["value"].to_numpy(dtype=float),
                    "x",
                    color=color,
                    ms=7,
                )
        ticks = stages[stages["kind"] == "cumulative"].drop_duplicates("t")
        ticks = ticks.sort_values("t")
        ax.set_xticks(ticks["t"], ticks["label"])
        self.ceiling_line_ = None
        if self.ceiling is not None:
            self.ceiling_line_ = ax.axhline(
                self.ceiling,
                ls=":",
                color="k",
                label="ceiling log N" if self.measure.startswith("vrpi") else "ceiling",
            )
        handles, labels = ax.get_legend_handles_labels()
        if self.single_markers_:
            handles.append(Line2D([], [], ls="none", marker="x", color="grey"))
            labels.append("newest release alone")
        ax.legend(handles, labels, fontsize=8)
        ax.set_xlabel("cumulative release state")
        unit = " (nats)" if self.measure.startswith("vrpi") else ""
        ax.set_ylabel(f"{self.measure}{unit}")
        ax.set_title("Pressure by release stage" if title is None else title)
        return self

    @classmethod
    def from_results(cls, results, *, measure="vrpi", alpha=None, ax=None, **kwargs):
        """Draw a :class:`~skprivacy.RenyiPressure` results table.

        Parameters
        ----------
        results : pandas.DataFrame
            ``RenyiPressure.results_``, or the table of
            :func:`~skprivacy.pressure_ladder` (its ``attacker`` column gives
            one series per attacker).
        measure : str, default="vrpi"
            Column to draw (``vrpi``, ``vrpi_prior``, ``p_guess``,
            ``top1_accuracy``, ...); its ``*_std`` column gives error bars.
        alpha : float or list of float, default=None
            Rényi order(s) to draw; None draws every order of the table (one
            series per attacker and order).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PressureStagesDisplay
            The plotted display.
        """
        required = {"kind", "t", "releases", "alpha", measure}
        missing = required - set(results.columns)
        if missing:
            raise ValueError(
                f"The results lack column(s) {sorted(missing)}; expected "
                "RenyiPressure.results_ or a pressure_ladder table."
            )
        if alpha is not None:
            wanted = np.atleast_1d(np.asarray(alpha, dtype=float))
            results = results[results["alpha"].isin(wanted)]
            if results.empty:
                raise ValueError(f"alpha={alpha!r} is not among the table's orders.")
        attackers = "attacker" in results.columns
        several_alphas = results["alpha"].nunique() > 1
        parts = []
        for alpha_value in pd.unique(results["alpha"]):
            alpha_txt = f"alpha={_alpha_text(alpha_value)}"
            for attacker in pd.unique(results["attacker"]) if attackers else [None]:
                rows = results[results["alpha"] == alpha_value]
                if attacker is not None:
                    rows = rows[rows["attacker"] == attacker]
                names = [str(attacker)] if attacker is not None else []
                if several_alphas or attacker is None:
                    names.append(alpha_txt)
                std = f"{measure}_std"
                parts.append(
                    pd.DataFrame(
                        {
                            "series": ", ".join(names),
                            "kind": rows["kind"].to_numpy(),
                            "t": rows["t"].to_numpy(),
                            "label": rows["releases"].astype(str).to_numpy(),
                            "value": rows[measure].to_numpy(dtype=float),
                            "std": rows[std].to_numpy(dtype=float)
                            if std in rows
                            else np.nan,
                        }
                    )
                )
        stages = pd.concat(parts, ignore_index=True)
        display = cls(
            stages=stages, measure=measure, ceiling=_ceiling(results, measure)
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls, estimator, *, measure="vrpi", alpha=None, ax=None, **kwargs
    ):
        """Draw the stages of a fitted :class:`~skprivacy.RenyiPressure`.

        Parameters
        ----------
        estimator : RenyiPressure
            Fitted pressure audit.
        measure : str, default="vrpi"
            Column of ``results_`` to draw.
        alpha : float or list of float, default=None
            Rényi order(s) to draw; None draws every fitted order.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PressureStagesDisplay
            The plotted display.
        """
        check_fitted(estimator, RenyiPressure, "PressureStagesDisplay.from_estimator")
        return cls.from_results(
            estimator.results_, measure=measure, alpha=alpha, ax=ax, **kwargs
        )
