"""
Open-world pressure with a calibrated "unknown" outcome
=======================================================

Paper 002 audits a closed world: every query belongs to an enrolled identity.
With ``open_world=f``, :class:`~skprivacy.RenyiPressure` holds out a fraction
``f`` of the identities as never enrolled. Their rows only appear as
calibration and query rows; the attacker's posterior gets an extra "unknown"
outcome whose probability comes from a logistic model on the attacker's top
posterior probability, fitted on the calibration rows. The measures then use
N + 1 outcomes.

We compare the closed-world audit with open-world audits holding out more and
more identities, on the same synthetic embeddings.
"""

# %%
import matplotlib.pyplot as plt

from skprivacy import PrototypeAttacker, RenyiPressure
from skprivacy.datasets import make_identity_embeddings

X, ids = make_identity_embeddings(40, 12, 32, separation=0.7, noise=1.0, random_state=0)
rows = []
for fraction in [None, 0.1, 0.25, 0.4]:
    audit = RenyiPressure(
        PrototypeAttacker(), open_world=fraction, n_repeats=2, random_state=0
    ).fit(X, ids)
    res = audit.results_.set_index("alpha")
    rows.append(
        {
            "held out": 0.0 if fraction is None else fraction,
            "outcomes": int(res.loc[2.0, "n_outcomes"]),
            "vRPI_2": res.loc[2.0, "vrpi"],
            "vRPI_2 (query prior)": res.loc[2.0, "vrpi_prior"],
            "P_guess": res.loc[2.0, "p_guess"],
            "top-1 accuracy": res.loc[2.0, "top1_accuracy"],
            "rejection threshold": audit.rejection_threshold_,
        }
    )
    print(
        f"held out {rows[-1]['held out']:.2f}: "
        + ", ".join(
            f"{k}={v:.4g}"
            for k, v in rows[-1].items()
            if k != "held out" and v is not None
        )
    )

# %%
# ``vrpi`` uses log(N + 1) as its reference, as if "unknown" were one more
# equally likely identity; ``vrpi_prior`` uses the actual mixture of enrolled
# and unknown queries as the prior, which is the fairer reference once many
# queries are unknown. The rejection threshold is the top posterior probability
# below which the calibrated model calls a query "unknown".
fig, ax = plt.subplots(figsize=(6, 3.5))
held = [r["held out"] for r in rows]
ax.plot(held, [r["vRPI_2"] for r in rows], "o-", label="vRPI_2 (uniform reference)")
ax.plot(
    held,
    [r["vRPI_2 (query prior)"] for r in rows],
    "s-",
    label="vRPI_2 (query-prior reference)",
)
ax.set_xlabel("fraction of identities never enrolled")
ax.set_ylabel("pressure (nats)")
ax.legend(fontsize=8)
fig.tight_layout()
