// Chapter 8 contract — normalisation: what keeps activations at the scale attention assumes.
// Students implement these in exercises/08-normalisation/ex1_layer_norm.cpp to
// ex3_layer_norm_backward.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// Shapes: x is (n, d), one token per row, d features per token; gamma and beta are (1, d).
#pragma once

#include "scalebook/core.hpp"

/// \file
/// \brief Chapter 8's exercise contract: LayerNorm and RMSNorm, each token's features scaled by
/// the token's own statistics, and LayerNorm's backward pass.
///
/// Rules for every function here (the checks rely on them):
/// - Bad input throws scalebook::ShapeError (empty, shapes that do not fit) or
///   scalebook::ValueError (NaN, infinity, an eps that is not above 0), exactly those types,
///   never a bare std::exception, and never aborts or returns garbage.
/// - Every error message starts with the function's name and ": ", e.g.
///   "layer_norm: x is empty (0, 4)". lib's require_* helpers (scalebook/core.hpp) write messages
///   that way; an error from Eigen's own assertions does not count as the function's check.
/// - Every finite input is valid, however large: a row whose entries lie beyond 1e154, whose
///   squares overflow a double, normalises as well as the same row divided by a power of two
///   does (which changes nothing but eps's share), and the result is finite. Statistics are taken
///   in two passes: the mean first, then the squares of the deviations from it.

/// \brief Chapter 8's exercises: the functions and types of normalisation.hpp.
namespace scalebook::ch08 {

/// \brief Exercise 8.1: LayerNorm (Ba et al., 2016) of each row, as PyTorch's `nn.LayerNorm(d)`:
/// \f$y_{ij} = \frac{x_{ij} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}\,\gamma_j + \beta_j\f$, with
/// \f$\mu_i = \frac1d \sum_j x_{ij}\f$ and \f$\sigma_i^2 = \frac1d \sum_j (x_{ij} - \mu_i)^2\f$
/// (the population variance, divided by d, not d − 1).
///
/// Chapter 1's standardisation per token instead of per feature: each row is centred and scaled by
/// its own statistics over its d features, the same for a token in training and in use. A row of
/// one feature (d = 1) has \f$x - \mu = 0\f$ and gives beta.
/// \param x the tokens, one per row, (n, d)
/// \param gamma the gain, (1, d): feature j's output is multiplied by gamma(j)
/// \param beta the bias, (1, d): added to feature j's output
/// \param eps \f$\varepsilon\f$ inside the square root (PyTorch's default 1e-5): any value above 0
/// \return (n, d)
/// \throws ShapeError if x is empty, or gamma or beta is not (1, d)
/// \throws ValueError if x, gamma or beta holds NaN or infinity, or eps is not a finite number
///   above 0
Matrix layer_norm(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps);

/// \brief Exercise 8.2: RMSNorm (Zhang and Sennrich, 2019) of each row, with eps inside the root
/// as in PyTorch's `nn.RMSNorm` (2.4 and later) and LLaMA:
/// \f$y_{ij} = \frac{x_{ij}}{\sqrt{\frac1d \sum_k x_{ik}^2 + \varepsilon}}\,\gamma_j\f$.
///
/// LayerNorm without the centring and without a bias: the row is divided by its root mean square,
/// not by its standard deviation, and its mean is kept.
/// \param x the tokens, one per row, (n, d)
/// \param gamma the gain, (1, d)
/// \param eps \f$\varepsilon\f$ inside the square root: any value above 0
/// \return (n, d)
/// \throws ShapeError if x is empty or gamma is not (1, d)
/// \throws ValueError if x or gamma holds NaN or infinity, or eps is not a finite number above 0
Matrix rms_norm(const Matrix& x, const RowVector& gamma, double eps);

/// Gradients of a loss L with respect to layer_norm's input and parameters.
struct LayerNormGrads {
  Matrix dx;         ///< (n, d) ∂L/∂x, passed on to the layer below
  RowVector dgamma;  ///< (1, d) ∂L/∂gamma, summed over the n tokens
  RowVector dbeta;   ///< (1, d) ∂L/∂beta, summed over the n tokens
};

/// \brief Exercise 8.3: the backward pass of layer_norm(x, gamma, beta, eps).
///
/// Given \p grad_out = ∂L/∂y (n, d), with \f$\hat x_{ij} = (x_{ij} - \mu_i)/s_i\f$ and
/// \f$s_i = \sqrt{\sigma_i^2 + \varepsilon}\f$ as in layer_norm, and \f$g_{ij} =\f$ grad_out(i, j)
/// gamma(j): dbeta(j) = \f$\sum_i\f$ grad_out(i, j), dgamma(j) = \f$\sum_i\f$ grad_out(i, j)
/// \f$\hat x_{ij}\f$, and
/// \f$dx_{ij} = \frac{1}{s_i}\left(g_{ij} - \frac1d \sum_k g_{ik} - \hat x_{ij}\,\frac1d \sum_k g_{ik} \hat x_{ik}\right)\f$:
/// each row's gradient loses its mean and its component along \f$\hat x\f$, the two directions in
/// which layer_norm's output does not move. beta plays no part in any gradient, so it is not a
/// parameter.
/// \param x the tokens layer_norm was given, (n, d)
/// \param gamma the gain it was given, (1, d)
/// \param eps the eps it was given
/// \param grad_out ∂L/∂y, (n, d)
/// \throws ShapeError if x is empty, gamma is not (1, d) or grad_out is not (n, d)
/// \throws ValueError if x, gamma or grad_out holds NaN or infinity, or eps is not a finite number
///   above 0
LayerNormGrads layer_norm_backward(const Matrix& x, const RowVector& gamma, double eps,
                                   const Matrix& grad_out);

}  // namespace scalebook::ch08

// The struct above crosses the grader's process boundary field by field (remote.def). Only the
// grader's targets have scalebook/remote.hpp on their include path.
#if __has_include("scalebook/remote.hpp")
#include "scalebook/remote.hpp"
SCALEBOOK_REMOTE_FIELDS(scalebook::ch08::LayerNormGrads, dx, dgamma, dbeta);
#endif
