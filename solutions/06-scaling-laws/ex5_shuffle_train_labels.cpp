// Reference for exercise 6.5 — shuffle_train_labels.
// Chapter 6: scaling laws and their limits.
#include "scaling_laws.hpp"

#include <string>
#include <utility>

#include "scalebook/random.hpp"

namespace scalebook::ch06 {

LabelSplit shuffle_train_labels(const std::vector<int>& train, const std::vector<int>& test, std::uint64_t seed) {
  const char* fn = "shuffle_train_labels";
  if (train.empty()) throw ShapeError(std::string(fn) + ": train is empty");
  for (const std::vector<int>* labels : {&train, &test}) {
    for (std::size_t i = 0; i < labels->size(); ++i) {
      if ((*labels)[i] < 0) {
        throw ValueError(std::string(fn) + ": " + (labels == &train ? "train" : "test") + "[" + std::to_string(i) +
                         "] = " + std::to_string((*labels)[i]) + " is not a class");
      }
    }
  }
  LabelSplit out{train, test};  // the test labels stay the real ones
  Rng rng(seed);
  for (std::size_t i = out.train.size() - 1; i > 0; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.next_u64() % (i + 1));
    std::swap(out.train[i], out.train[j]);
  }
  return out;
}

}  // namespace scalebook::ch06
