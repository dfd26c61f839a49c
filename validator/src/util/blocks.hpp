// A sequence that grows by fixed blocks: indexing is a shift and a mask, growing never moves an
// element (a copy into a larger buffer would double the peak), and memory follows the elements
// actually added, never a count announced in advance.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace ggufcheck::detail {

template <typename T>
class Blocks {
 public:
  static constexpr std::size_t kShift = 8;  // 256 elements a block: a small file needs little
  static constexpr std::size_t kBlock = std::size_t{1} << kShift;

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] const T& operator[](std::size_t i) const {
    return blocks_[i >> kShift][i & (kBlock - 1)];
  }

  template <typename... Args>
  void emplace_back(Args&&... args) {
    if ((size_ & (kBlock - 1)) == 0) blocks_.push_back(std::make_unique<T[]>(kBlock));
    blocks_.back()[size_ & (kBlock - 1)] = T(std::forward<Args>(args)...);
    ++size_;
  }
  void push_back(const T& value) { emplace_back(value); }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace ggufcheck::detail
