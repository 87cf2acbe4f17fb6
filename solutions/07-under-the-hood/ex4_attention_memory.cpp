// Reference for exercise 7.4 — attention_memory.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// Naive attention holds the (n_q, n_k) score matrix; tiled attention one score tile and the
// running state of one query block, whatever n is.
#include "under_the_hood.hpp"

#include <algorithm>

namespace scalebook::ch07 {

MemoryUse attention_memory(Index n_q, Index n_k, Index d_v, Index block_q, Index block_k,
                                 Index bytes_per_number) {
  require_positive("attention_memory", "n_q", n_q);
  require_positive("attention_memory", "n_k", n_k);
  require_positive("attention_memory", "d_v", d_v);
  require_positive("attention_memory", "block_q", block_q);
  require_positive("attention_memory", "block_k", block_k);
  require_positive("attention_memory", "bytes_per_number", bytes_per_number);
  const Count b_q = std::min(block_q, n_q), b_k = std::min(block_k, n_k);  // a block is never longer than the sequence
  MemoryUse memory;
  memory.naive = Count{n_q} * n_k * bytes_per_number;
  memory.tiled = (b_q * b_k + b_q * Count{d_v} + 2 * b_q) * bytes_per_number;  // tile + accumulator + max and sum
  return memory;
}

}  // namespace scalebook::ch07
