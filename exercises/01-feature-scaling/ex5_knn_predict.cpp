// Exercise 1.5 — knn_predict
// Chapter 1: feature scaling.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_scaling.cpp;
// the contract is chapters/01-feature-scaling/feature_scaling.hpp.
//
// What to write:
// For each test row: the Euclidean distance to every training row; the k nearest training rows
// (equal distances: the lower training index first); the class most of them have (a tie between
// classes: the smallest class). Classes are whole numbers 0, 1, 2, ... Return one predicted class
// per test row.
// Throw ShapeError if train_x or test_x is empty, their columns differ, train_y's length differs
// from train_x's rows, or k < 1 or k > the number of training rows; ValueError for NaN or
// infinity anywhere, or a class that is negative or not a whole number.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "feature_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace scalebook::ch01 {

Vector knn_predict([[maybe_unused]] const Matrix& train_x, [[maybe_unused]] const Vector& train_y,
                   [[maybe_unused]] const Matrix& test_x, [[maybe_unused]] int k) {
  scalebook::not_implemented("1.5", "knn_predict");
}

}  // namespace scalebook::ch01
