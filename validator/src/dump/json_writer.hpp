// A streaming JSON writer for dump: text goes into a bounded buffer that is handed to an output
// callback each time it fills, so an output of any size (a 1 GiB string, an array of millions of
// elements) never exists whole in memory. Strings are escaped exactly as nlohmann's
// dump(-1, ' ', true) escapes them (the canonical output predates this writer): ASCII only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::detail {

class JsonWriter {
 public:
  // Receives the text in order, piece by piece; returns false when it could not be written.
  using Output = std::function<bool(std::string_view)>;
  // The most text held before it is handed over.
  static constexpr std::size_t kBufferSize = std::size_t{64} << 10;
  static constexpr std::size_t kInitialBuffer = std::size_t{1} << 10;

  explicit JsonWriter(const Output& output);
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Containers and keys; commas are placed between members and elements.
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view name);
  // A string value. Text that is not UTF-8 (dump gives invalid strings as hex; only a message
  // naming an odd path can hold such bytes) has each invalid byte written as U+FFFD.
  void string(std::string_view text);
  // A string value holding the lower-case hex of the bytes.
  void hex_string(std::string_view bytes);
  void boolean(bool value);
  // Text as it is (the newline after the value).
  void raw(std::string_view text);

  // Hands over the buffered text. False once the output has failed: from then on nothing more
  // is written, and the caller stops producing.
  bool flush();
  [[nodiscard]] bool failed() const { return failed_; }
  // Whether any text has been handed over yet.
  [[nodiscard]] bool flushed_any() const { return flushed_any_; }
  // Drops the buffered text and forgets the open containers (to write another value instead).
  void discard();

 private:
  void separate();
  void put(char c) {
    buffer_.push_back(c);
    if (buffer_.size() >= kBufferSize) flush();
  }
  void put(std::string_view text);
  void escape(std::string_view text);

  const Output& output_;
  std::string buffer_;
  std::vector<bool> first_in_container_;  // one per open container
  bool after_key_ = false;
  bool failed_ = false;
  bool flushed_any_ = false;
};

}  // namespace ggufcheck::detail
