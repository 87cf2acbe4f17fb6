// scalebook/mlp.hpp — lib's small-MLP trainer for chapters 2 and 6 (regression, and classification
// with softmax cross-entropy), and lib's copies of the pieces
// chapter 2 teaches (K-fold splits, the smoothed curve and its best epoch). The trainer is
// Keras's defaults in C++ and in float32, fast on the small batches of scarce data:
//
//   Dense(h1, relu) - ... - Dense(hk, relu) - Dense(1); Glorot-uniform weights, zero biases;
//   mean squared error loss, mean absolute error metric; RMSprop (lr 1e-3, rho 0.9, eps 1e-7);
//   shuffled mini-batches; per-epoch train and validation history.
//
// Same seed, same bits: every random draw comes from one scalebook::Rng(seed), in a documented
// order (see train_mlp), and every sum is taken in a fixed order. The bits may differ between
// machines whose vector units differ (with or without fused multiply-add), never between runs.
/// \file
/// \brief lib's small-MLP trainer (chapters 1, 2 and 6), and its copies of the pieces chapter 2
/// teaches.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER <= 2
#error "scalebook/mlp.hpp is lib's copy of what chapter 2 teaches (dense forward and backward, RMSprop, kfold_splits, smooth_curve, best_epoch): exercises of chapters 1-2 write their own"
#endif

#include <cstdint>
#include <vector>

#include "scalebook/core.hpp"

namespace scalebook {

/// What train_mlp builds and how it trains it. Defaults: DLwP's Boston model.
struct MlpConfig {
  std::vector<Index> hidden{64, 64};  ///< widths of the ReLU layers; the output is one linear unit
  int epochs = 100;              ///< passes over the training rows
  Index batch_size = 16;         ///< rows per RMSprop step; the last batch of an epoch may be smaller
  double learning_rate = 1e-3;  ///< RMSprop, Keras's defaults
  double rho = 0.9;              ///< RMSprop's decay of the mean squared gradient
  double epsilon = 1e-7;         ///< RMSprop's guard against dividing by zero
  std::uint64_t seed = 1;        ///< of the one Rng every random draw comes from
};

/// One entry per epoch. loss and mae are averaged over the epoch's batches as they were trained
/// (Keras's convention: each batch before its update); val_loss and val_mae on the validation
/// rows after the epoch (empty when there are none); final_train_* on the training rows after
/// training, measured like the validation error.
struct History {
  std::vector<double> loss;      ///< training MSE per epoch, over its batches as they were trained
  std::vector<double> mae;       ///< training MAE per epoch, likewise
  std::vector<double> val_loss;  ///< validation MSE after each epoch
  std::vector<double> val_mae;   ///< validation MAE after each epoch
  double final_train_loss = 0.0;  ///< MSE on all training rows after the last epoch
  double final_train_mae = 0.0;   ///< MAE on all training rows after the last epoch
};

/// Trains a fresh MLP on (x_train, y_train), reporting on (x_val, y_val) after every epoch
/// (x_val may have 0 rows). Order of the random draws from Rng(config.seed): the weights of layer
/// 1, 2, ... each drawn row by row of its (inputs, outputs) matrix, uniform in [-l, l] with
/// l = sqrt(6 / (inputs + outputs)); then, for every epoch, one Fisher–Yates shuffle of the
/// training rows (for i = n-1 down to 1, swap i with next_u64() % (i + 1)); batches are the
/// shuffled rows in order, the last one smaller when batch_size does not divide n.
/// RMSprop, per parameter p with gradient g: v = rho v + (1 - rho) g^2;
/// p -= lr g / sqrt(v + eps) (Keras 3's form; v starts at 0).
/// \throws ShapeError for empty training data, mismatched rows or columns, a hidden width or
///   batch size < 1, or epochs < 0; ValueError for NaN or infinity in the data or a learning rate,
///   rho or epsilon out of range.
History train_mlp(const Matrix& x_train, const Vector& y_train, const Matrix& x_val,
                  const Vector& y_val, const MlpConfig& config);

/// What train_classifier returns: the training curve and the network's logits after training.
struct ClassifierRun {
  std::vector<double> loss;  ///< mean cross-entropy per epoch, over its batches as they were trained
  Matrix train_logits;       ///< (n_train, classes) on the training rows after the last epoch
  Matrix val_logits;         ///< (n_val, classes) on x_val after the last epoch
};

/// Trains a fresh MLP classifier: the same network, draws and RMSprop as train_mlp, with
/// `classes` linear output units and the softmax cross-entropy loss (lib's stable softmax,
/// scalebook/softmax.hpp): for a batch of m rows, the mean of -ln softmax(logits)[label], whose
/// gradient at the logits is (softmax - onehot) / m. Labels are 0 .. classes - 1. For chapter 6's
/// memorisation experiments.
/// \throws ShapeError for empty training data, a label count that differs from the rows,
///   mismatched columns, classes < 2 and the configuration errors of train_mlp; ValueError for
///   NaN or infinity in the data, a label out of range, or bad RMSprop settings.
ClassifierRun train_classifier(const Matrix& x_train, const std::vector<int>& y_train, const Matrix& x_val,
                               Index classes, const MlpConfig& config);

/// One fold of K-fold validation: the rows that train and the rows that validate.
struct Fold {
  std::vector<Index> train;       ///< the rows that train, in increasing order
  std::vector<Index> validation;  ///< the rows that validate, in increasing order
};

/// DLwP's K-fold: s = floor(n / k); fold i validates rows [i s, (i + 1) s) and trains on all the
/// others, in increasing order (the last n - k s rows always train).
/// \throws ShapeError if k < 2 or k > n.
std::vector<Fold> kfold_splits(Index n, int k);

/// The exponential moving average of DLwP's first edition (smooth_curve): s_0 = v_0,
/// s_t = factor s_{t-1} + (1 - factor) v_t.
/// \throws ShapeError if values is empty; ValueError if factor is outside [0, 1) or a value is NaN.
std::vector<double> smooth_curve(const std::vector<double>& values, double factor = 0.9);

/// The index of the smallest value (the first one, on ties). \throws ShapeError if empty;
/// ValueError on NaN.
Index best_epoch(const std::vector<double>& values);

}  // namespace scalebook
