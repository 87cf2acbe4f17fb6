// Chapter 6 contract — scaling laws and their limits.
// Students implement these in exercises/06-scaling-laws/ex1_fit_power_law.cpp to
// ex6_accuracy_report.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// A "size" N is a model or data size (parameters, rows, tokens): a positive number. A "loss" L is
// a validation loss: a positive number. sizes[i] and losses[i] describe one run.
//
// Bad input throws, never aborts and never returns garbage: scalebook::ShapeError for lists of
// different lengths and too few points for the parameters fitted (or empty matrices, shapes that
// do not fit); scalebook::ValueError for sizes or losses that are not positive, NaN, infinity and
// values out of range. Every message starts with the function's name and ": ", e.g.
// "fit_power_law: 5 sizes but 4 losses"; the require_* helpers of scalebook/core.hpp write such
// messages, and the checks rely on that prefix.
#pragma once

#include <cstdint>
#include <vector>

#include "scalebook/core.hpp"

/// \file
/// \brief Chapter 6's exercise contract: power laws fitted on log–log axes, with and without an
/// irreducible loss; extrapolation and its error; the compute-optimal split of a budget between
/// parameters and data; shuffled training labels and the accuracies that tell memorisation from
/// generalisation.

/// \brief Chapter 6's exercises: the functions and types of scaling_laws.hpp.
namespace scalebook::ch06 {

/// Sizes or losses, one per run (sizes[i] and losses[i] describe run i).
using Numbers = std::vector<double>;

/// Class labels 0, 1, 2, ..., one per example.
using Labels = std::vector<int>;

/// L(N) = a N^(-alpha).
struct PowerLaw {
  double a = 0.0;      ///< the loss at N = 1
  double alpha = 0.0;  ///< the exponent: the loss falls by a factor 2^alpha when N doubles
};

/// L(N) = e + a N^(-alpha): a power law that levels off at the irreducible loss e.
struct SaturatingPowerLaw {
  double e = 0.0;      ///< the irreducible loss E, reached only as N grows without bound
  double a = 0.0;      ///< A
  double alpha = 0.0;  ///< the exponent of the reducible part
};

/// \brief Exercise 6.1: the power law \f$L = a N^{-\alpha}\f$ fitted by least squares on log–log
/// axes: the straight line \f$\ln L = \ln a - \alpha \ln N\f$ through the points
/// \f$(\ln N_i, \ln L_i)\f$ (given in any order), with the ordinary least-squares slope and intercept.
/// \throws ShapeError if the lists differ in length or hold fewer than 2 points
/// \throws ValueError if a size or loss is not positive or not finite, or all sizes are equal
PowerLaw fit_power_law(const Numbers& sizes, const Numbers& losses);

/// \brief Exercise 6.2: the power law with an irreducible term, \f$L = E + A N^{-\alpha}\f$.
///
/// The method (a profile search over E, which converges whatever the start): for a trial E in
/// \f$[0, \min_i L_i)\f$, the losses above it, \f$L_i - E\f$, are a plain power law, so
/// fit_power_law (6.1) on \f$(N_i, L_i - E)\f$ gives A and \f$\alpha\f$; the trial's score is the
/// sum of squared residuals on linear axes, \f$S(E) = \sum_i (L_i - E - A N_i^{-\alpha})^2\f$.
/// Scan \f$E_k = \min_i L_i \,(1 - 10^{-12k/256})\f$ for k = 0 .. 255 (E_0 = 0, then ever closer
/// to the smallest loss: the gap \f$\min_i L_i - E\f$ shrinks by the same factor at each step),
/// then refine around the best \f$E_k\f$ (the first k of least score) by golden-section search on
/// \f$[E_{\max(k-1, 0)}, E_{k+1}]\f$ to a width below \f$10^{-12} \min_i L_i\f$. The answer's E is
/// the midpoint of the last interval, unless its score is above the best grid point's: then it is
/// that \f$E_k\f$ itself (so a pure power law gets E = 0 exactly); A and alpha are the fit at that
/// E. E never reaches the smallest loss: the logarithm of \f$L_i - E \le 0\f$ does not exist.
/// This is not the least-squares fit of \f$E + A N^{-\alpha}\f$: for each E, A and alpha minimise
/// the squared residuals of \f$\ln(L_i - E)\f$, and only E is scored on linear axes. On points that
/// follow the law with little noise the two agree closely; on a curve of another shape they differ
/// (the lesson fits both).
/// \throws ShapeError if the lists differ in length or hold fewer than 3 points
/// \throws ValueError as fit_power_law()
SaturatingPowerLaw fit_saturating_power_law(const Numbers& sizes, const Numbers& losses);

/// What a fitted law predicts at sizes it may never have seen, against the losses measured there.
struct Extrapolation {
  Numbers predicted;       ///< E + A N_i^(-alpha) for every size
  Numbers relative_error;  ///< (predicted_i - losses_i) / losses_i, signed
  double worst = 0.0;      ///< the largest |relative_error_i|
};

/// \brief Exercise 6.3: the law's predictions at \p sizes and their relative errors against the
/// measured \p losses.
/// \throws ShapeError if the lists are empty or differ in length
/// \throws ValueError if a size or loss is not positive or not finite, or the law has a
///   non-finite parameter, a negative e or a or a negative alpha
Extrapolation extrapolate(const SaturatingPowerLaw& law, const Numbers& sizes, const Numbers& losses);

/// L(N, D) = e + a / N^alpha + b / D^beta: the loss of a model of N parameters trained on D tokens.
struct ComputeLaw {
  double e = 0.0;      ///< E, the irreducible loss
  double a = 0.0;      ///< A, the weight of the parameters' term
  double b = 0.0;      ///< B, the weight of the data's term
  double alpha = 0.0;  ///< the exponent of N
  double beta = 0.0;   ///< the exponent of D
};

/// A compute budget split between parameters and training tokens.
struct Allocation {
  double params = 0.0;  ///< N_opt
  double tokens = 0.0;  ///< D_opt
  double loss = 0.0;    ///< L(N_opt, D_opt)
};

/// \brief Exercise 6.4: the compute-optimal N and D for a budget of \p compute FLOPs, with the
/// training cost \f$C \approx 6ND\f$ (2 FLOPs per parameter and token forward, 4 backward):
/// the minimum of \f$L(N, C / 6N)\f$ over N, in closed form,
/// \f$N_{opt} = G (C/6)^{\beta/(\alpha+\beta)}\f$, \f$D_{opt} = G^{-1} (C/6)^{\alpha/(\alpha+\beta)}\f$
/// with \f$G = (\alpha a / \beta b)^{1/(\alpha+\beta)}\f$ (Hoffmann et al. 2022, eq. 4).
/// \throws ValueError if compute is not positive and finite, or the law has a non-finite
///   parameter, a negative e, or a, b, alpha or beta not positive
Allocation compute_optimal(const ComputeLaw& law, double compute);

/// Labels for a memorisation experiment: the training labels to learn, the test labels to score.
struct LabelSplit {
  Labels train;  ///< the labels to train on (shuffled by 6.5)
  Labels test;   ///< the labels to score the test set with (the real ones)
};

/// \brief Exercise 6.5: Zhang et al.'s random labels: the training labels shuffled, so that the
/// label of an image no longer depends on the image (the class counts stay the same), and the
/// test labels left as they are, so that test accuracy still measures what was learnt about the
/// real task.
///
/// The shuffle is Fisher–Yates from the back with Rng(seed): for i = n−1 down to 1, swap entries
/// i and j = rng.next_u64() % (i + 1).
/// \throws ShapeError if train is empty
/// \throws ValueError if a label (train or test) is negative
LabelSplit shuffle_train_labels(const Labels& train, const Labels& test,
                                std::uint64_t seed);

/// Accuracy and mean cross-entropy on the training and the test set.
struct AccuracyReport {
  double train_accuracy = 0.0;  ///< the fraction of training rows whose largest logit is the label's
  double test_accuracy = 0.0;   ///< the same on the test rows
  double train_loss = 0.0;      ///< the mean of -ln softmax(logits)[label] on the training rows
  double test_loss = 0.0;       ///< the same on the test rows
};

/// \brief Exercise 6.6: accuracy and softmax cross-entropy of a classifier's logits (one row per
/// example, one column per class) on its training and test rows.
///
/// A row's prediction is the column of its largest logit (the first one on a tie). The
/// cross-entropy \f$-\ln \mathrm{softmax}(z)_y = \ln \sum_j e^{z_j} - z_y\f$ must stay finite
/// for logits as large as ±1000, and be computed for any finite logits (subtract the row's
/// maximum first, in double).
/// \throws ShapeError if a logits matrix is empty, its rows differ from its labels' count, or the
///   two matrices have different numbers of columns (classes)
/// \throws ValueError if a logit is not finite or a label is outside 0 .. classes − 1
AccuracyReport accuracy_report(const Matrix& train_logits, const Labels& train_labels,
                               const Matrix& test_logits, const Labels& test_labels);

}  // namespace scalebook::ch06

// The structs above cross the grader's process boundary field by field (remote.def). Only the
// grader's targets have scalebook/remote.hpp on their include path.
#if __has_include("scalebook/remote.hpp")
#include "scalebook/remote.hpp"
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::PowerLaw, a, alpha);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::SaturatingPowerLaw, e, a, alpha);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::Extrapolation, predicted, relative_error, worst);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::ComputeLaw, e, a, b, alpha, beta);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::Allocation, params, tokens, loss);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::LabelSplit, train, test);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch06::AccuracyReport, train_accuracy, test_accuracy, train_loss, test_loss);
#endif
