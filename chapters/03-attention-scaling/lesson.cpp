// Chapter 3 lesson — why attention scores are divided by sqrt(d_k).
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet) and writes ch03_variance.dat and ch03_entropy.dat for the figures.
// Usage: ch03_lesson [data folder]. Deterministic: fixed seeds, fixed precision, one thread.
//
// Linked against the reference (the book's numbers) and against a student's track, where the same
// program shows their own numbers beside the book's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "attention_scaling.hpp"
#include "scalebook/lesson.hpp"

namespace ch03 = scalebook::ch03;
using scalebook::Index;
using scalebook::Matrix;
using scalebook::Rng;
using scalebook::Vector;
using scalebook::normal_matrix;

namespace {

// ---- Printing ------------------------------------------------------------------------------

// "0.7071"; NaN and infinity spelled the same way on every platform (printf's "-nan" is not).
std::string number(double x, int decimals = 4) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, x == 0.0 ? 0.0 : x);  // no "-0.0000"
  return buffer;
}

// Like printf's "%.4g" with NaN spelled out: for numbers as far apart as exp(709) and exp(-745).
std::string number_g(double x) {
  if (std::isnan(x)) return "NaN";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", x);
  return buffer;
}

// One labelled row of a (1, m) matrix.
void print_row(const char* label, const Matrix& m, int decimals = 4) {
  std::printf("%-25s", label);
  for (Index j = 0; j < m.cols(); ++j) std::printf(" %8s", number(m(0, j), decimals).c_str());
  std::printf("\n");
}

void print_key_header(Index keys) {
  std::printf("%-25s", "");
  for (Index j = 0; j < keys; ++j) std::printf("       k%d", static_cast<int>(j));
  std::printf("\n");
}

// The rank of each entry of a (1, m) row: 0 for the smallest score, m - 1 for the largest.
Matrix ranks(const Matrix& row) {
  Matrix r = Matrix::Zero(1, row.cols());
  for (Index j = 0; j < row.cols(); ++j)
    for (Index l = 0; l < row.cols(); ++l) r(0, j) += row(0, l) < row(0, j) ? 1.0 : 0.0;
  return r;
}

// ---- The measurements ----------------------------------------------------------------------

//! [jacobian]
// How strongly a row p of softmax weights reacts to its scores: the Jacobian
// J = diag(p) - p p^T, entry (j, l) = p_j (delta_jl - p_l), measured by its
// Frobenius norm. Weights that put everything on one key give 0: no gradient.
double softmax_jacobian_norm(const Matrix& weights, Index row) {
  double sum_of_squares = 0.0;
  for (Index j = 0; j < weights.cols(); ++j) {
    for (Index l = 0; l < weights.cols(); ++l) {
      const double p_j = weights(row, j), p_l = weights(row, l);
      const double entry = (j == l ? p_j : 0.0) - p_j * p_l;
      sum_of_squares += entry * entry;
    }
  }
  return std::sqrt(sum_of_squares);
}

// The mean of softmax_jacobian_norm over the rows of a matrix of weights.
double mean_jacobian_norm(const Matrix& weights) {
  double sum = 0.0;
  for (Index i = 0; i < weights.rows(); ++i) sum += softmax_jacobian_norm(weights, i);
  return sum / static_cast<double>(weights.rows());
}
//! [jacobian]

//! [variance-experiment]
// Exercise 3.4 for each d_k: the variance of q·k, without and with scaling.
struct VarianceRow {
  double d_k, unscaled, scaled;
};

std::vector<VarianceRow> variance_experiment(int samples) {
  std::vector<VarianceRow> rows;
  for (int d_k : {4, 16, 64, 256, 1024}) {
    Rng rng_a(100 + d_k), rng_b(100 + d_k);  // the same draws, twice
    const double unscaled = ch03::dot_product_variance(d_k, samples, false, rng_a);
    const double scaled = ch03::dot_product_variance(d_k, samples, true, rng_b);
    rows.push_back({static_cast<double>(d_k), unscaled, scaled});
  }
  return rows;
}
//! [variance-experiment]

//! [concentration-experiment]
// The largest weight of each row, averaged over the rows: 1 / m when the
// weights are uniform, 1 when every row puts all its weight on one key.
double mean_max_weight(const Matrix& weights) { return weights.rowwise().maxCoeff().mean(); }

// Random queries and keys (n = m = 16, iid N(0, 1) components): how spread
// out is each row of weights, without (index 0) and with (index 1) scaling?
struct ConcentrationRow {
  double d_k, entropy[2], max_weight[2], jacobian[2];
};

ConcentrationRow concentration_at(int d_k, int trials, Rng& rng) {
  ConcentrationRow row{static_cast<double>(d_k), {0, 0}, {0, 0}, {0, 0}};
  for (int t = 0; t < trials; ++t) {
    const Matrix q = normal_matrix(16, d_k, rng), k = normal_matrix(16, d_k, rng);
    const Matrix weights[2] = {ch03::softmax_rows(ch03::dot_scores(q, k)),
                               ch03::softmax_rows(ch03::scaled_scores(q, k))};
    for (int s = 0; s < 2; ++s) {
      row.entropy[s] += ch03::row_entropy(weights[s]).mean() / trials;
      row.max_weight[s] += mean_max_weight(weights[s]) / trials;
      row.jacobian[s] += mean_jacobian_norm(weights[s]) / trials;
    }
  }
  return row;
}
//! [concentration-experiment]

// Queries and keys that break the assumption, for "when the assumption fails": components with
// mean `mean` and variance 1; when `correlated`, the components of a vector share a random part s,
// c = (s + e_c) / sqrt(2): mean 0, variance 1, correlation 1/2 between any two of them.
Matrix non_iid_matrix(Index rows, Index cols, double mean, bool correlated, Rng& rng) {
  Matrix m(rows, cols);
  for (Index i = 0; i < rows; ++i) {
    const double shared = correlated ? rng.normal() : 0.0;
    for (Index c = 0; c < cols; ++c) {
      const double e = rng.normal();
      m(i, c) = mean + (correlated ? (shared + e) / std::sqrt(2.0) : e);
    }
  }
  return m;
}

// For such vectors: the mean and sample variance of z = q·k / sqrt(d_k) over `samples` pairs,
// and the mean row entropy of scaled attention with n = m = 16.
struct NonIidRow {
  double z_mean, z_variance, entropy;
  double entropy_by_dk;  // the same rows with the scores divided by d_k instead of sqrt(d_k)
};

NonIidRow non_iid_at(int d_k, int samples, double mean, bool correlated, Rng& rng) {
  NonIidRow row{0, 0, 0, 0};
  Vector z(samples);
  for (int s = 0; s < samples; ++s) {
    const Matrix q = non_iid_matrix(1, d_k, mean, correlated, rng);
    const Matrix k = non_iid_matrix(1, d_k, mean, correlated, rng);
    z(s) = q.row(0).dot(k.row(0)) / std::sqrt(static_cast<double>(d_k));
  }
  row.z_mean = z.mean();
  row.z_variance = (z.array() - row.z_mean).square().sum() / (samples - 1);
  const int trials = 4;
  for (int t = 0; t < trials; ++t) {
    const Matrix q = non_iid_matrix(16, d_k, mean, correlated, rng);
    const Matrix k = non_iid_matrix(16, d_k, mean, correlated, rng);
    row.entropy += ch03::row_entropy(ch03::softmax_rows(ch03::scaled_scores(q, k))).mean() / trials;
    const Matrix by_dk = ch03::dot_scores(q, k) / static_cast<double>(d_k);
    row.entropy_by_dk += ch03::row_entropy(ch03::softmax_rows(by_dk)).mean() / trials;
  }
  return row;
}

//! [naive-softmax]
// The textbook formula exp(x_j) / sum over l of exp(x_l), evaluated as written.
Matrix naive_softmax_rows(const Matrix& s) {
  Matrix w(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    double sum = 0.0;
    for (Index j = 0; j < s.cols(); ++j) sum += std::exp(s(i, j));
    for (Index j = 0; j < s.cols(); ++j) w(i, j) = std::exp(s(i, j)) / sum;
  }
  return w;
}
//! [naive-softmax]

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    // ---- The seed's worked example --------------------------------------------------------
    lesson.begin("worked-example");
    //! [worked-example]
    Matrix q(1, 2), k(3, 2);
    q << 1, 1;  // one query, d_k = 2
    k << 1, 0,  // three keys, one per row
         0, 1,
         1, 1;
    const Matrix dots = ch03::dot_scores(q, k);       // (1, 3)
    const Matrix scaled = ch03::scaled_scores(q, k);  // (1, 3), divided by sqrt(2)
    const Matrix w_dots = ch03::softmax_rows(dots);
    const Matrix w_scaled = ch03::softmax_rows(scaled);
    //! [worked-example]
    std::printf("q = (1, 1); keys k0 = (1, 0), k1 = (0, 1), k2 = (1, 1); d_k = 2\n\n");
    print_key_header(3);
    print_row("dot scores q.k", dots);
    print_row("scaled scores q.k/sqrt(2)", scaled);
    print_row("softmax of the dot scores", w_dots);
    print_row("softmax of the scaled", w_scaled);
    std::printf("\nlargest weight: %s without scaling, %s with scaling\n",
                number(w_dots.maxCoeff()).c_str(), number(w_scaled.maxCoeff()).c_str());
    std::printf("entropy (nats): %s without scaling, %s with scaling\n",
                number(ch03::row_entropy(w_dots)(0)).c_str(),
                number(ch03::row_entropy(w_scaled)(0)).c_str());
    std::printf("                (uniform over 3 keys: ln 3 = %s)\n",
                number(std::log(3.0)).c_str());
    lesson.value("worked_scaled_low", scaled(0, 0), "%.4f");
    lesson.value("worked_scaled_high", scaled(0, 2), "%.4f");
    lesson.end("worked-example");

    // ---- Scaling keeps the order of the scores; a zero query scores every key equally -----
    lesson.begin("order-kept");
    {
      Rng rng(3);
      const Matrix q1 = normal_matrix(1, 8, rng);  // one query, d_k = 8
      const Matrix k6 = normal_matrix(6, 8, rng);  // six keys
      const Matrix raw = ch03::dot_scores(q1, k6), s = ch03::scaled_scores(q1, k6);
      std::printf("one random query, six random keys, d_k = 8\n\n");
      print_key_header(6);
      print_row("dot scores q.k", raw);
      print_row("scaled scores q.k/sqrt(8)", s);
      print_row("rank of the dot score", ranks(raw), 0);
      print_row("rank of the scaled score", ranks(s), 0);
      print_row("softmax of the dot scores", ch03::softmax_rows(raw));
      print_row("softmax of the scaled", ch03::softmax_rows(s));
    }
    lesson.end("order-kept");

    lesson.begin("zero-query");
    {
      Rng rng(4);
      const Matrix zero = Matrix::Zero(1, 8);
      const Matrix k5 = normal_matrix(5, 8, rng);
      std::printf("q = 0, five random keys, d_k = 8\n\n");
      print_key_header(5);
      print_row("dot scores q.k", ch03::dot_scores(zero, k5));
      print_row("scaled scores q.k/sqrt(8)", ch03::scaled_scores(zero, k5));
      print_row("softmax of the scaled", ch03::softmax_rows(ch03::scaled_scores(zero, k5)));
    }
    lesson.end("zero-query");

    // ---- The variance of q·k, measured ----------------------------------------------------
    lesson.begin("variance-table");
    {
      const int samples = 1000;
      const std::vector<VarianceRow> rows = variance_experiment(samples);
      std::printf("%d random pairs (q, k) per row, components iid N(0, 1); each measured\n"
                  "variance +- its standard error; the scaled column is the unscaled one\n"
                  "divided by d_k (the same draws); the last column is the miss in\n"
                  "standard errors\n\n", samples);
      std::printf("%6s %17s %7s %20s %7s %9s\n", "d_k", "Var(q.k)", "theory", "Var(q.k/sqrt(d_k))",
                  "theory", "miss");
      std::vector<double> dks, unscaled, scaled, theory;
      for (const VarianceRow& row : rows) {
        // The sample variance of N values of z = q.k has a standard error of about
        // sqrt((E z^4 - (Var z)^2) / N) = d_k sqrt((2 + 6 / d_k) / N) (see the page).
        const double relative_error = std::sqrt((2.0 + 6.0 / row.d_k) / samples);
        const std::string measured = number(row.unscaled, 2) + " +- " + number(row.d_k * relative_error, 2);
        const std::string measured_scaled = number(row.scaled) + " +- " + number(relative_error);
        std::printf("%6.0f %17s %7.0f %20s %7s %9s\n", row.d_k, measured.c_str(), row.d_k,
                    measured_scaled.c_str(), number(1.0, 0).c_str(),
                    number((row.scaled - 1.0) / relative_error, 2).c_str());
        dks.push_back(row.d_k);
        unscaled.push_back(row.unscaled);
        scaled.push_back(row.scaled);
        theory.push_back(row.d_k);  // Var(q·k) = d_k under the assumptions
      }
      lesson.table("ch03_variance.dat", {"d_k", "var_unscaled", "var_scaled", "theory_unscaled"},
                   {dks, unscaled, scaled, theory});
      lesson.value("variance_dk_smallest", dks.front(), "%.0f");
      lesson.value("variance_dk_largest", dks.back(), "%.0f");
    }
    lesson.end("variance-table");

    // ---- Softmax concentration and vanishing gradients ------------------------------------
    std::vector<ConcentrationRow> rows;
    const int trials = 8;
    for (int d_k = 1; d_k <= 1024; d_k *= 2) {
      Rng rng(200 + d_k);
      rows.push_back(concentration_at(d_k, trials, rng));
    }

    lesson.begin("concentration");
    {
      std::printf("n = m = 16 queries and keys, %d random draws per d_k; uniform attention\n"
                  "over 16 keys has entropy ln 16 = %s and largest weight 1/16 = %s\n\n",
                  trials, number(std::log(16.0)).c_str(), number(1.0 / 16.0).c_str());
      std::printf("%6s %26s %26s\n", "", "mean row entropy (nats)", "mean largest weight");
      std::printf("%6s %13s %12s %13s %12s\n", "d_k", "unscaled", "scaled", "unscaled", "scaled");
      std::vector<double> dks, h_unscaled, h_scaled, h_uniform;
      for (const ConcentrationRow& row : rows) {
        std::printf("%6.0f %13s %12s %13s %12s\n", row.d_k, number(row.entropy[0]).c_str(),
                    number(row.entropy[1]).c_str(), number(row.max_weight[0]).c_str(),
                    number(row.max_weight[1]).c_str());
        dks.push_back(row.d_k);
        h_unscaled.push_back(row.entropy[0]);
        h_scaled.push_back(row.entropy[1]);
        h_uniform.push_back(std::log(16.0));
      }
      lesson.table("ch03_entropy.dat", {"d_k", "entropy_unscaled", "entropy_scaled", "ln_m"},
                   {dks, h_unscaled, h_scaled, h_uniform});
    }
    lesson.end("concentration");

    lesson.begin("vanishing-gradient");
    {
      Matrix reference = Matrix::Zero(3, 16);  // uniform; two keys share all; one key takes all
      reference.row(0).setConstant(1.0 / 16.0);
      reference(1, 0) = reference(1, 1) = 0.5;
      reference(2, 0) = 1.0;
      std::printf("mean Frobenius norm of the softmax Jacobian diag(p) - p p^T, same rows\n");
      std::printf("(for comparison: uniform weights over 16 keys give %s, two keys sharing\n"
                  "all the weight equally give %s, one key taking all of it gives %s)\n\n",
                  number(softmax_jacobian_norm(reference, 0)).c_str(),
                  number(softmax_jacobian_norm(reference, 1)).c_str(),
                  number(softmax_jacobian_norm(reference, 2)).c_str());
      std::printf("%6s %12s %12s\n", "d_k", "unscaled", "scaled");
      for (const ConcentrationRow& row : rows) {
        std::printf("%6.0f %12s %12s\n", row.d_k, number(row.jacobian[0]).c_str(),
                    number(row.jacobian[1]).c_str());
      }
    }
    lesson.end("vanishing-gradient");

    // ---- When the assumption fails --------------------------------------------------------
    lesson.begin("assumption-fails");
    {
      const int samples = 500;
      std::printf("z = q.k/sqrt(d_k) over %d random pairs per row; row entropy of scaled\n"
                  "attention with n = m = 16 (uniform: ln 16 = %s)\n\n",
                  samples, number(std::log(16.0)).c_str());
      std::printf("(a) components independent with variance 1, but mean 1\n"
                  "    theory: mean of z = sqrt(d_k), variance of z = 3\n");
      std::printf("%6s %12s %12s %12s %14s\n", "d_k", "mean z", "sqrt(d_k)", "Var z",
                  "row entropy");
      std::vector<double> mean_one_entropy;
      for (int d_k : {4, 16, 64, 256, 1024}) {
        Rng rng(300 + d_k);
        const NonIidRow row = non_iid_at(d_k, samples, 1.0, false, rng);
        std::printf("%6d %12s %12s %12s %14s\n", d_k, number(row.z_mean).c_str(),
                    number(std::sqrt(d_k)).c_str(), number(row.z_variance).c_str(),
                    number(row.entropy).c_str());
        mean_one_entropy.push_back(row.entropy);
      }
      std::printf("\n(b) components with mean 0 and variance 1, but correlated (1/2 between\n"
                  "    any two components of the same vector)\n"
                  "    theory: mean of z = 0, variance of z = (d_k + 3)/4\n");
      std::printf("%6s %12s %12s %12s %14s %12s\n", "d_k", "mean z", "Var z", "(d_k+3)/4",
                  "row entropy", "... / d_k");
      std::vector<double> correlated_entropy, correlated_by_dk;
      for (int d_k : {4, 16, 64, 256, 1024}) {
        Rng rng(400 + d_k);
        const NonIidRow row = non_iid_at(d_k, samples, 0.0, true, rng);
        std::printf("%6d %12s %12s %12s %14s %12s\n", d_k, number(row.z_mean).c_str(),
                    number(row.z_variance).c_str(), number((d_k + 3) / 4.0).c_str(),
                    number(row.entropy).c_str(), number(row.entropy_by_dk).c_str());
        correlated_entropy.push_back(row.entropy);
        correlated_by_dk.push_back(row.entropy_by_dk);
      }
      std::printf("(the last column: the same rows' entropy with the scores divided by d_k)\n");
      bool falls = true;
      for (std::size_t i = 1; i < correlated_entropy.size(); ++i) falls = falls && correlated_entropy[i] < correlated_entropy[i - 1];
      lesson.claim(falls, "with correlated components the row entropy falls steadily as d_k grows");
      lesson.claim(*std::min_element(mean_one_entropy.begin(), mean_one_entropy.end()) > correlated_entropy.back() + 1.0,
                   "with mean-1 components the row entropy does not fall the way the correlated one does");
      lesson.claim(correlated_by_dk.back() > correlated_by_dk[2] - 0.2 && correlated_by_dk.back() > correlated_entropy.back() + 1.0,
                   "divided by d_k instead, the correlated case's entropy levels off instead of collapsing");
    }
    lesson.end("assumption-fails");

    // ---- Large logits: why softmax subtracts the row maximum ------------------------------
    lesson.begin("large-logits");
    {
      const double largest = std::numeric_limits<double>::max();
      const double smallest = std::numeric_limits<double>::denorm_min();
      std::printf("largest double:           %s = exp(%s)\n", number_g(largest).c_str(),
                  number(std::log(largest), 2).c_str());
      std::printf("smallest positive double: %s = exp(%s)\n", number_g(smallest).c_str(),
                  number(std::log(smallest), 2).c_str());
      // exp(x) is infinite above ln(largest), and rounds to 0 below ln(smallest) - ln 2.
      lesson.value("exp_overflow", std::trunc(std::log(largest)), "%.0f");
      lesson.value("exp_underflow", std::trunc(std::log(smallest) - std::log(2.0)), "%.0f");
      std::printf("so: exp(709) = %s, exp(710) = %s, exp(1000) = %s\n",
                  number_g(std::exp(709.0)).c_str(), number_g(std::exp(710.0)).c_str(),
                  number_g(std::exp(1000.0)).c_str());
      std::printf("    exp(-745) = %s, exp(-746) = %s, exp(-1000) = %s\n\n",
                  number_g(std::exp(-745.0)).c_str(), number_g(std::exp(-746.0)).c_str(),
                  number_g(std::exp(-1000.0)).c_str());

      Matrix scores(3, 3);
      scores << 1000, 999, 998,
                -1000, -1001, -1002,
                1, 0, -1;
      const Matrix naive = naive_softmax_rows(scores), stable = ch03::softmax_rows(scores);
      std::printf("%-22s %26s   %26s\n", "scores", "exp(x) / sum exp(x)",
                  "max subtracted first");
      for (Index i = 0; i < 3; ++i) {
        char label[64];
        std::snprintf(label, sizeof label, "(%.0f, %.0f, %.0f)", scores(i, 0), scores(i, 1),
                      scores(i, 2));
        std::printf("%-22s %8s %8s %8s   %8s %8s %8s\n", label, number(naive(i, 0)).c_str(),
                    number(naive(i, 1)).c_str(), number(naive(i, 2)).c_str(),
                    number(stable(i, 0)).c_str(), number(stable(i, 1)).c_str(),
                    number(stable(i, 2)).c_str());
      }
    }
    lesson.end("large-logits");
  });
}
