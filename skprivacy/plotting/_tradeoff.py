# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Leakage (TAR at FAR) and utility of a sanitiser over a parameter sweep."""

import numpy as np

from skprivacy.plotting._base import get_axes

__all__ = ["PrivacyUtilityDisplay"]


def _utility_columns(table, utility):
    if utility is None:
        return [
            c
            for c in table.columns
            if c == "attribute_accuracy" or str(c).startswith("precision_at_")
        ]
    return [utility] if isinstance(utility, str) else list(utility)


class PrivacyUtilityDisplay:
    """Privacy–utility trade-off: leakage and utility per swept value.

    Draws the table of :func:`~skprivacy.sanitize.privacy_utility_tradeoff`:
    the verification TAR at the target FAR (leakage, higher = leakier) with
    its Clopper–Pearson interval on the left axis, and the utility columns on
    a twin right axis, against the swept parameter (one tick per value, in
    table order). Build it with :meth:`from_tradeoff`.

    Parameters
    ----------
    param_values : list
        Swept values, in table order (tick labels).
    tar : ndarray of shape (n_values,)
        TAR at the target FAR (a point estimate).
    tar_lower, tar_upper : ndarray of shape (n_values,) or None, default=None
        Its interval.
    utility : dict of str to ndarray, default=None
        Utility columns (e.g. ``attribute_accuracy``, ``precision_at_5``).
    param_name : str, default=None
        Horizontal-axis label.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Leakage axes (left).
    right_ax_ : matplotlib Axes
        Utility axes (right, a twin of ``ax_``).
    figure_ : matplotlib Figure
        Figure containing both.
    line_ : matplotlib Line2D
        The TAR curve.
    band_ : matplotlib PolyCollection or None
        The TAR interval.
    utility_lines_ : dict of str to matplotlib Line2D
        One curve per utility column.

    See Also
    --------
    skprivacy.sanitize.privacy_utility_tradeoff : Computes the table.

    Examples
    --------
    >>> import pandas as pd
    >>> from skprivacy.plotting import PrivacyUtilityDisplay
    >>> table = pd.DataFrame({"n_components": [0, 4], "tar": [0.6, 0.0],
    ...                       "tar_lower": [0.5, 0.0], "tar_upper": [0.7, 0.1],
    ...                       "attribute_accuracy": [0.9, 0.89]})
    >>> display = PrivacyUtilityDisplay.from_tradeoff(table)
    >>> list(display.utility_lines_)
    ['attribute_accuracy']
    """

    def __init__(
        self,
        *,
        param_values,
        tar,
        tar_lower=None,
        tar_upper=None,
        utility=None,
        param_name=None,
    ):
        self.param_values = param_values
        self.tar = tar
        self.tar_lower = tar_lower
        self.tar_upper = tar_upper
        self.utility = utility
        self.param_name = param_name

    def plot(self, ax=None):
        """Draw leakage and utility.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes for the leakage; None creates a figure. The utility axes is
            its twin.

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display, with its artists.
        """
        self.figure_, self.ax_ = get_axes(ax, figsize=(6, 4))
        ax = self.ax_
        xs = np.arange(len(self.param_values))
        (self.line_,) = ax.plot(
            xs, self.tar, "o-", color="C3", label="TAR at FAR (leakage)"
        )
        self.band_ = None
        if self.tar_lower is not None and self.tar_upper is not None:
            self.band_ = ax.fill_between(
                xs, self.tar_lower, self.tar_upper, color="C3", alpha=0.2
            )
        ax.set_xticks(xs)
        ax.set_xticklabels([str(v) for v in self.param_values])
        ax.set_xlabel("" if self.param_name is None else str(self.param_name))
        ax.set_ylabel("TAR at FAR (higher = leakier)", color="C3")
        ax.set_ylim(-0.02, 1.02)
        self.right_ax_ = ax.twinx()
        self.utility_lines_ = {}
        for i, (name, values) in enumerate((self.utility or {}).items()):
            (self.utility_lines_[name],) = self.right_ax_.plot(
                xs, values, "s--", color=f"C{i}", label=name
            )
        self.right_ax_.set_ylabel("utility")
        self.right_ax_.set_ylim(-0.02, 1.02)
        handles, labels = ax.get_legend_handles_labels()
        handles_r, labels_r = self.right_ax_.get_legend_handles_labels()
        ax.legend(handles + handles_r, labels + labels_r, loc="center right")
        return self

    @classmethod
    def from_tradeoff(cls, table, *, x=None, utility=None, ax=None):
        """Draw a table returned by :func:`~skprivacy.sanitize.privacy_utility_tradeoff`.

        Parameters
        ----------
        table : pandas.DataFrame
            One row per swept value, with ``tar`` and optionally
            ``tar_lower``, ``tar_upper`` and utility columns.
        x : str, default=None
            Column of the swept values; None uses the first column.
        utility : str or list of str, default=None
            Utility column(s); None uses every column named
            ``attribute_accuracy`` or ``precision_at_*`` present.
        ax : matplotlib Axes, default=None
            Axes for the leakage; None creates a figure.

        Returns
        -------
        display : PrivacyUtilityDisplay
            The plotted display.
        """
        if "tar" not in table.columns:
            raise ValueError(
                "The table has no 'tar' column; expected the output of "
                "privacy_utility_tradeoff."
            )
        x = table.columns[0] if x is None else x
        has_band = {"tar_lower", "tar_upper"} <= set(table.columns)
        display = cls(
            param_values=list(table[x]),
            tar=np.asarray(table["tar"], dtype=float),
            tar_lower=np.asarray(table["tar_lower"], float) if has_band else None,
            tar_upper=np.asarray(table["tar_upper"], float) if has_band else None,
            utility={
                str(c): np.asarray(table[c], dtype=float)
                for c in _utility_columns(table, utility)
            },
            param_name=x,
        )
        return display.plot(ax=ax)
