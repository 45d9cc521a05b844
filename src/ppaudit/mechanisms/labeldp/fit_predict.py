"""A default ``fit_predict_proba`` model for the label-DP mechanisms that fit one (LP-2ST, PATE teachers and student)."""

from __future__ import annotations

import numpy as np

from .release import FitPredictProba, _check_num_classes

__all__ = ["logistic_regression_fit_predict_proba"]


def logistic_regression_fit_predict_proba(num_classes: int, **kwargs) -> FitPredictProba:
    """A ``fit_predict_proba`` callable backed by scikit-learn's ``LogisticRegression``.

    Columns are mapped to all ``num_classes`` classes (a class absent from the training
    labels gets probability 0). With a single class present the prediction is that class.

    Args:
        num_classes: C.
        **kwargs: passed to ``sklearn.linear_model.LogisticRegression``.

    Returns:
        ``fit_predict_proba(X_train, y_train, X_predict)``.
    """
    k = _check_num_classes(num_classes)

    def fit_predict_proba(x_train, y_train, x_predict):
        from sklearn.linear_model import LogisticRegression

        y_tr = np.asarray(y_train).astype(np.int64)
        xp = np.asarray(x_predict)
        out = np.zeros((xp.shape[0], k))
        present = np.unique(y_tr)
        if present.size == 1:
            out[:, present[0]] = 1.0
            return out
        model = LogisticRegression(**kwargs).fit(np.asarray(x_train), y_tr)
        out[:, model.classes_] = model.predict_proba(xp)
        return out

    return fit_predict_proba
