// Runs a loop over rows on all hardware threads when the work is large enough to be worth it.
// The split into chunks depends only on the row count, so results that are combined per chunk
// in chunk order are the same on every run.
#pragma once
#include <cstdint>
#include <functional>

namespace normjit::test {

// Calls body(first_row, end_row) over disjoint ranges covering [0, rows); `chunk` is the
// chunk's index in [0, chunk_count). Exceptions from body are rethrown on the caller.
using RowRangeBody = std::function<void(int64_t chunk, int64_t first_row, int64_t end_row)>;
void parallel_for_rows(int64_t rows, int64_t elements_per_row, const RowRangeBody& body);

// How many chunks parallel_for_rows will use for this loop (for per-chunk partial results).
int64_t row_chunk_count(int64_t rows, int64_t elements_per_row);

}  // namespace normjit::test
