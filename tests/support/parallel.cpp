#include "support/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace normjit::test {
namespace {

// Below this many elements a loop runs on the calling thread: starting threads costs more.
constexpr int64_t kElementsPerThread = 1 << 16;
// A fixed chunk count (not the core count) keeps the chunking identical on every machine.
constexpr int64_t kMaxChunks = 64;

}  // namespace

int64_t row_chunk_count(int64_t rows, int64_t elements_per_row) {
  if (rows <= 0) return 0;
  const int64_t work = rows * std::max<int64_t>(elements_per_row, 1);
  return std::clamp<int64_t>(work / kElementsPerThread, 1, std::min(rows, kMaxChunks));
}

void parallel_for_rows(int64_t rows, int64_t elements_per_row, const RowRangeBody& body) {
  const int64_t chunks = row_chunk_count(rows, elements_per_row);
  if (chunks == 0) return;
  auto chunk_range = [&](int64_t c, int64_t* first, int64_t* end) {
    *first = rows * c / chunks;
    *end = rows * (c + 1) / chunks;
  };
  if (chunks == 1) {
    body(0, 0, rows);
    return;
  }
  const int threads = static_cast<int>(
      std::min<int64_t>(chunks, std::max(1u, std::thread::hardware_concurrency())));
  std::mutex mu;
  std::exception_ptr failure;
  int64_t next_chunk = 0;
  auto worker = [&] {
    for (;;) {
      int64_t c;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next_chunk == chunks || failure) return;
        c = next_chunk++;
      }
      int64_t first, end;
      chunk_range(c, &first, &end);
      try {
        body(c, first, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace normjit::test
