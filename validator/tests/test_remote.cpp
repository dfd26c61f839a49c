// Remote files (docs/remote.md): the parsers of what a server says and the growth arithmetic on
// their own, then the whole client against a local server (http_server.py, on 127.0.0.1 and an
// ephemeral port, started and stopped here) that counts the requests and bytes it serves and
// records the Authorization header of each: the same report as the local file, within the
// request and byte bounds, and a GGUF0001 finding for every way a server can fail or lie.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/fixtures.hpp"
#include "cli_run.hpp"
#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "remote/growth.hpp"
#include "remote/http.hpp"
#include "remote/url.hpp"
#include "splits/names.hpp"
#include "splits/shards.hpp"
#include "test_support.hpp"
#include "validate/growing.hpp"
#include "validate/remote.hpp"

#ifdef GGUFCHECK_TEST_REMOTE
#include <curl/curl.h>
#endif

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

[[maybe_unused]] std::string show_report(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    out +=
        std::string(code_string(f.code)) + " @" + std::to_string(f.offset) + " " + f.message + "\n";
  }
  return out;
}
using detail::parse_content_range;
using detail::parse_origin;

// --- hf:// and origins -----------------------------------------------------------------------

TEST(RemoteUrls, HfMapsToTheResolveUrl) {
  const auto map = [](std::string_view url) {
    return detail::map_hf_url(url, "https://huggingface.co");
  };
  EXPECT_EQ(map("hf://owner/repo/model.gguf").url,
            "https://huggingface.co/owner/repo/resolve/main/model.gguf");
  EXPECT_EQ(map("hf://owner/repo@v1.0/dir/model-Q4_K_M.gguf").url,
            "https://huggingface.co/owner/repo/resolve/v1.0/dir/model-Q4_K_M.gguf");
  // A revision with '/' is one segment; spaces and '%' in a file name are encoded.
  EXPECT_EQ(map("hf://owner/repo@refs/pr/1/model.gguf").url,
            "https://huggingface.co/owner/repo/resolve/refs/pr/1/model.gguf");
  EXPECT_EQ(map("HF://o/r/a b%.gguf").url, "https://huggingface.co/o/r/resolve/main/a%20b%25.gguf");
  EXPECT_EQ(detail::map_hf_url("hf://o/r/f.gguf", "http://127.0.0.1:8080/").url,
            "http://127.0.0.1:8080/o/r/resolve/main/f.gguf");
  for (const char* bad : {"hf://owner", "hf://owner/repo", "hf://owner/repo/", "hf:///repo/f.gguf",
                          "hf://o/../f.gguf", "hf://o/r/./f.gguf", "hf://o/r@/f.gguf",
                          "hf://o/r/f.gguf?download=1", "https://o/r/f.gguf"}) {
    const auto mapped = map(bad);
    EXPECT_TRUE(mapped.url.empty()) << bad << " -> " << mapped.url;
    EXPECT_FALSE(mapped.error.empty()) << bad;
  }
}

TEST(RemoteUrls, RevisionWithSlashIsGivenEncoded) {
  // "@refs/pr/1" would end the revision at its first '/': a revision with '/' is given encoded,
  // and sent as the Hub's clients send it, one encoded path segment.
  EXPECT_EQ(detail::map_hf_url("hf://o/r@refs%2Fpr%2F1/m.gguf", "https://huggingface.co").url,
            "https://huggingface.co/o/r/resolve/refs%2Fpr%2F1/m.gguf");
  EXPECT_EQ(detail::map_hf_url("hf://o/r@v%31/m.gguf", "https://huggingface.co").url,
            "https://huggingface.co/o/r/resolve/v1/m.gguf");
  for (const char* bad : {"hf://o/r@%2/m.gguf", "hf://o/r@%zz/m.gguf", "hf://o/r@%/m.gguf"}) {
    EXPECT_TRUE(detail::map_hf_url(bad, "https://huggingface.co").url.empty()) << bad;
  }
}

TEST(RemoteUrls, WhatIsAUrl) {
  EXPECT_TRUE(is_url("https://huggingface.co/x"));
  EXPECT_TRUE(is_url("HTTP://x"));
  EXPECT_TRUE(is_url("hf://o/r/f.gguf"));
  EXPECT_FALSE(is_url("model.gguf"));
  EXPECT_FALSE(is_url("-"));
  EXPECT_FALSE(is_url("https:/x"));
  EXPECT_FALSE(is_url("ftp://x/y.gguf"));
  EXPECT_FALSE(is_url("./https://x"));
}

TEST(RemoteUrls, Origins) {
  const auto o = [](std::string_view url) { return parse_origin(url); };
  ASSERT_TRUE(o("https://HuggingFace.co/a/b"));
  EXPECT_EQ(o("https://HuggingFace.co/a/b")->host, "huggingface.co");
  EXPECT_EQ(o("https://huggingface.co/a")->port, 443);
  EXPECT_EQ(o("http://h/a")->port, 80);
  EXPECT_EQ(o("http://user:pw@h:8080/a")->host, "h");
  EXPECT_EQ(o("http://user:pw@h:8080/a")->port, 8080);
  EXPECT_EQ(o("http://[::1]:9/x")->host, "[::1]");
  EXPECT_EQ(o("http://[::1]:9/x")->port, 9);
  EXPECT_EQ(o("https://huggingface.co./x")->host, "huggingface.co");
  EXPECT_EQ(*o("https://h/x"), *o("HTTPS://H:443/y"));
  EXPECT_NE(*o("https://h/x"), *o("http://h/x"));
  EXPECT_NE(*o("https://h/x"), *o("https://h:444/x"));
  for (const char* bad : {"ftp://h/x", "https://", "https://:80/", "http://h:0/", "http://h:65536/",
                          "http://h:x/", "http://[::1/", "http://h h/", "//h/x", "h/x"}) {
    EXPECT_FALSE(o(bad)) << bad;
  }
  EXPECT_TRUE(detail::is_hf_host("huggingface.co"));
  EXPECT_TRUE(detail::is_hf_host("cdn-lfs.huggingface.co"));
  EXPECT_FALSE(detail::is_hf_host("huggingface.co.evil.example"));
  EXPECT_FALSE(detail::is_hf_host("evilhuggingface.co"));
  EXPECT_FALSE(detail::is_hf_host("hf.co"));
}

TEST(RemoteUrls, WhereTheTokenGoesAndWhichRedirectsAreFollowed) {
  constexpr std::string_view kHub = "https://huggingface.co";
  const std::string file = "https://huggingface.co/o/r/resolve/main/f.gguf";
  EXPECT_TRUE(detail::sends_token(file, file, kHub));
  EXPECT_TRUE(detail::sends_token(file, "https://HUGGINGFACE.CO:443/other", kHub));
  // A redirect to the Hub's storage, another scheme, another port: no token.
  EXPECT_FALSE(detail::sends_token(file, "https://cdn-lfs.huggingface.co/x", kHub));
  EXPECT_FALSE(detail::sends_token(file, "http://huggingface.co/o/r/resolve/main/f.gguf", kHub));
  EXPECT_FALSE(detail::sends_token(file, "https://huggingface.co:8443/x", kHub));
  // A file elsewhere never gets it, even on its own origin; the endpoint's origin does.
  EXPECT_FALSE(
      detail::sends_token("https://example.com/f.gguf", "https://example.com/f.gguf", kHub));
  EXPECT_TRUE(detail::sends_token("http://127.0.0.1:8080/f", "http://127.0.0.1:8080/g",
                                  "http://127.0.0.1:8080"));
  EXPECT_FALSE(detail::sends_token("http://127.0.0.1:8080/f", "http://localhost:8080/f",
                                   "http://127.0.0.1:8080"));
  EXPECT_EQ(detail::refused_redirect("https://a/x", "https://b/y"), "");
  EXPECT_EQ(detail::refused_redirect("http://a/x", "https://b/y"), "");
  EXPECT_EQ(detail::refused_redirect("http://a/x", "http://b/y"), "");
  EXPECT_EQ(detail::refused_redirect("https://a/x", "http://a/x"),
            "a redirect from https to http is refused");
  EXPECT_EQ(detail::refused_redirect("https://a/x", "file:///etc/passwd"),
            "not an http or https URL");
}

// --- what a server says ----------------------------------------------------------------------

TEST(RemoteHeaders, ContentRange) {
  const auto r = parse_content_range("bytes 0-1048575/16777216");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->satisfied);
  EXPECT_EQ(r->first, 0U);
  EXPECT_EQ(r->last, 1048575U);
  EXPECT_EQ(r->total, 16777216U);
  EXPECT_EQ(parse_content_range("  Bytes 5-9/*")->total, std::nullopt);
  EXPECT_TRUE(parse_content_range("bytes 0-9/10 "));  // whitespace around a field value is allowed
  const auto unsatisfied = parse_content_range("bytes */0");
  ASSERT_TRUE(unsatisfied);
  EXPECT_FALSE(unsatisfied->satisfied);
  EXPECT_EQ(unsatisfied->total, 0U);
  for (const char* bad :
       {"", "bytes", "bytes 0-9", "bytes 9-0/10", "bytes 0-10/10", "bytes -1-9/10", "bytes 0-9/-1",
        "bytes */*", "items 0-9/10", "bytes 0 - 9/10",
        "bytes 0-99999999999999999999/"
        "100000000000000000000",
        "bytes 0x0-9/10", "bytes +0-9/10", "bytes 0-9/1e3"}) {
    EXPECT_FALSE(parse_content_range(bad)) << bad;
  }
  EXPECT_EQ(detail::parse_decimal("18446744073709551615"), std::nullopt);  // 20 digits: refused
  EXPECT_EQ(detail::parse_decimal("9999999999999999999"), 9999999999999999999ULL);
}

TEST(RemoteHeaders, RetryAfter) {
  const std::time_t now = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(detail::parse_retry_after("120", now), 120U);
  EXPECT_EQ(detail::parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now), 60U);
  EXPECT_EQ(detail::parse_retry_after("Sun, 06 Nov 1994 08:40:37 GMT", now), 0U);
  EXPECT_EQ(detail::parse_retry_after("-1", now), std::nullopt);
  EXPECT_EQ(detail::parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), std::nullopt);
  EXPECT_EQ(detail::parse_retry_after("Sun, 36 Nov 1994 08:50:37 GMT", now), std::nullopt);
  EXPECT_EQ(detail::parse_retry_after("soon", now), std::nullopt);
}

TEST(RemoteHeaders, ResponsesAndTheirFields) {
  detail::ResponseHeaders h;
  h.add_line("HTTP/1.1 302 Found\r\n");
  h.add_line("Location: /x\r\n");
  h.add_line("ETag: \"old\"\r\n");
  EXPECT_EQ(h.status, 302);
  h.add_line("HTTP/2 206\r\n");  // the redirect's target answers: its fields only
  h.add_line("content-range:  bytes 0-9/10 \r\n");
  h.add_line("Content-Length: 10\r\n");
  h.add_line("\r\n");
  EXPECT_EQ(h.status, 206);
  EXPECT_EQ(h.reason, "");
  EXPECT_EQ(h.content_range, "bytes 0-9/10");
  EXPECT_EQ(h.content_length, "10");
  EXPECT_EQ(h.etag, std::nullopt);
  h.add_line("HTTP/1.1 9999 Nope\r\n");
  EXPECT_TRUE(h.malformed);
  detail::ResponseHeaders big;
  big.add_line("HTTP/1.1 200 OK\r\n");
  for (int i = 0; i < 100 && !big.too_large; ++i) big.add_line(std::string(1000, 'x') + ": y\r\n");
  EXPECT_TRUE(big.too_large);
}

// --- growth ----------------------------------------------------------------------------------

struct Growth {
  unsigned requests = 0;
  std::uint64_t kept = 0;
  detail::Probe probe;
};

// The reads of a remote file as remote.cpp makes them, over bytes in memory.
Growth grow(const std::vector<std::uint8_t>& file) {
  Growth g;
  Options options;
  detail::StreamTail tail;
  g.kept = std::min<std::uint64_t>(detail::kFirstRequest, file.size());
  g.requests = 1;
  for (;;) {
    tail.size = file.size() - g.kept;
    g.probe = detail::probe_input(Bytes(file.data(), g.kept), options, &tail);
    if (g.probe.tensors_complete || g.probe.index.shortfall.needed == 0 || g.kept >= file.size()) {
      return g;
    }
    const std::uint64_t next =
        detail::next_request_end(g.probe.index, g.kept, file.size(), std::uint64_t{4} << 30);
    EXPECT_GT(next, g.kept);
    g.kept = next;
    ++g.requests;
  }
}

TEST(RemoteGrowth, TheTokenizerFileTakesAtMostFourRequests) {
  const std::vector<std::uint8_t> file = bench::tokenizer_file(250000);
  const Growth g = grow(file);
  std::cout << "tokenizer file: " << file.size() << " bytes, " << g.requests << " requests\n";
  EXPECT_LE(g.requests, 4U);
  EXPECT_EQ(g.kept, file.size());  // all metadata: every byte, none twice
  EXPECT_TRUE(g.probe.tensors_complete);
}

// general.architecture, a vocabulary of `tokens`, `tensors` F32 tensors of `floats` each (and one
// of 7, whose data is not a multiple of the alignment: padding after it).
Document model_shaped(std::size_t tokens, std::size_t tensors, std::uint64_t floats) {
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
  std::vector<Value> vocab;
  for (std::size_t i = 0; i < tokens; ++i)
    vocab.push_back(Value::string("tok" + std::to_string(i)));
  doc.metadata.push_back(
      {"tokenizer.ggml.tokens", Value::array(ValueType::String, std::move(vocab)), {}});
  for (std::size_t i = 0; i < tensors; ++i) {
    doc.tensors.push_back({"t" + std::to_string(i), {floats}, 0, {}, {}});
    if (i == tensors / 2) doc.tensors.push_back({"odd", {7}, 0, {}, {}});
  }
  return doc;
}

TEST(RemoteGrowth, AModelIsReadToItsTensorInfosAndLittleMore) {
  const Written w = write(model_shaped(300000, 8, 1 << 20));  // 4 MB of vocabulary, 32 MiB data
  const Growth g = grow(w.bytes);
  std::cout << "model: tensor infos end at " << w.layout.infos_end << ", kept " << g.kept
            << " bytes in " << g.requests << " requests\n";
  EXPECT_TRUE(g.probe.tensors_complete);
  EXPECT_LE(g.kept, w.layout.infos_end + detail::kLookahead + w.layout.infos_end / 16);
  EXPECT_LE(g.requests, 4U);
}

TEST(RemoteGrowth, AlwaysGrowsAndStaysInTheFile) {
  detail::FileIndex index;
  index.shortfall.needed = 10;
  EXPECT_EQ(detail::next_request_end(index, 100, 1000, 4096), 1000U);  // lookahead, clipped
  index.shortfall.needed = UINT64_MAX;                                 // an absurd count
  EXPECT_EQ(detail::next_request_end(index, 100, UINT64_MAX, 4096), 4096U);
  index.shortfall = {200, 100, 1, UINT64_MAX, 150};  // one string of 50 bytes out of 2^64
  EXPECT_EQ(detail::next_request_end(index, 200, 1 << 30, 8 << 20), 8U << 20);
  EXPECT_EQ(detail::next_request_end(index, 1000, 1001, 4096), 1001U);
  // A claim of gigabytes is believed a step at a time: 16 MiB past a first MiB, then 8 times.
  index.shortfall = {std::uint64_t{3} << 30, 0, 0, 0, 0};
  EXPECT_EQ(
      detail::next_request_end(index, 1 << 20, std::uint64_t{4} << 30, std::uint64_t{4} << 30),
      17U << 20);
  EXPECT_EQ(
      detail::next_request_end(index, 64 << 20, std::uint64_t{4} << 30, std::uint64_t{4} << 30),
      512U << 20);
}

TEST(RemoteGrowth, PaddingSpans) {
  using P = detail::StreamTail::Probe;
  std::vector<P> probes = {{100, 104, 0, 0, false}, {1000, 1010, 0, 0, false}};
  auto plan = detail::plan_padding(probes);
  ASSERT_EQ(plan.spans.size(), 1U);  // less than kPaddingGap apart: one request
  EXPECT_EQ(plan.spans[0].begin, 100U);
  EXPECT_EQ(plan.spans[0].end, 1010U);
  probes.clear();
  for (std::uint64_t i = 0; i < 40; ++i) probes.push_back({i << 30, (i << 30) + 8, 0, 0, false});
  plan = detail::plan_padding(probes);
  EXPECT_EQ(plan.spans.size(), detail::kPaddingRequests);
  EXPECT_EQ(plan.unchecked, 40 - detail::kPaddingRequests);
  EXPECT_EQ(plan.first_unchecked, std::uint64_t{detail::kPaddingRequests} << 30);
  plan = detail::plan_padding({{0, std::uint64_t{1} << 31, 0, 0, false}});  // a hostile alignment
  EXPECT_TRUE(plan.spans.empty());
  EXPECT_EQ(plan.unchecked, 1U);
}

TEST(RemoteGrowth, WhatWasNotReadStaysWithinTheFindingsLimit) {
  // Found by fuzz_remote: a report at its findings limit got the GGUF0002 of what a remote or
  // stream reading left unread as one finding more than the limit.
  Report report;
  report.findings.push_back({Code::UnreadableFile, Severity::Error, 10, 0, "", "kept", ""});
  report.errors = 1;
  // At the limit, the finding that says why the file fails replaces the last one kept.
  const Report full = detail::with_limit_finding(report, 1, 5, "not read", "");
  ASSERT_EQ(full.findings.size(), 1U);
  EXPECT_EQ(full.findings[0].message, "not read");
  EXPECT_EQ(full.errors, 2U);
  EXPECT_EQ(full.findings_dropped, 1U);
  const Report none = detail::with_limit_finding(report, 0, 5, "not read", "");
  EXPECT_EQ(none.findings.size(), 1U);  // a limit of 0 keeps nothing more
  EXPECT_EQ(none.errors, 2U);
  EXPECT_EQ(none.findings_dropped, 1U);
  const Report room = detail::with_limit_finding(report, 2, 5, "not read", "");
  ASSERT_EQ(room.findings.size(), 2U);
  EXPECT_EQ(room.findings[0].message, "not read");  // by offset
  EXPECT_EQ(room.errors, 2U);
  EXPECT_EQ(room.findings_dropped, 0U);
}

#ifndef GGUFCHECK_TEST_REMOTE
TEST(RemoteOff, UrlsAreUnreadableAndSaySo) {
  EXPECT_FALSE(remote_supported());
  const Report r = validate_file("https://huggingface.co/o/r/resolve/main/f.gguf", Options{});
  ASSERT_EQ(r.findings.size(), 1U);
  EXPECT_EQ(r.findings[0].code, Code::UnreadableFile);
  EXPECT_NE(r.findings[0].message.find("built without remote files"), std::string::npos);
  EXPECT_EQ(r.exit_status(), 2);
}
#else
// --- the server ------------------------------------------------------------------------------

std::string body_of(const std::string& url, const char* method = "GET") {
  CURL* curl = curl_easy_init();
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* data, std::size_t size, std::size_t n, void* user) {
        static_cast<std::string*>(user)->append(data, size * n);
        return size * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) throw std::runtime_error("control request failed: " + url);
  return body;
}

// The files it serves, the server, and its log.
// The server's files: the same for every test.
void put(const fs::path& root, const std::string& relative, const ByteVector& bytes) {
  fs::create_directories((root / relative).parent_path());
  if (!save_file(root / relative, bytes)) throw std::runtime_error("cannot write " + relative);
}

// The model most tests fetch (300,000 tokens of vocabulary, 8 tensors).
const Written& model() {
  static const Written written = write(model_shaped(300000, 8, 1 << 20));
  return written;
}

void write_server_files(const fs::path& root) {
  fs::create_directories(root);
  const fs::path examples = fs::path(GGUFCHECK_SOURCE_DIR) / "examples" / "valid";
  for (const auto& entry : fs::directory_iterator(examples)) {
    if (entry.path().extension() == ".gguf")
      fs::copy_file(entry.path(), root / entry.path().filename());
  }
  put(root, "tokenizer.gguf", bench::tokenizer_file(250000));
  put(root, "empty.gguf", {});  // a 416 "bytes */0" to the first request
  const std::string pointer =
      "version https://git-lfs.github.com/spec/v1\noid sha256:0000\nsize 123\n";
  put(root, "pointer.gguf", ByteVector(pointer.begin(), pointer.end()));
  put(root, "model.gguf", model().bytes);
  WriteOptions nonzero;
  nonzero.padding_byte = 0x5a;
  put(root, "nonzero-padding.gguf", write_bytes(model_shaped(1000, 8, 1 << 16), nonzero));
  Document nan = model_shaped(10, 2, 1 << 16);
  std::vector<std::uint8_t> data(std::size_t{4} << 16, 0);
  data[4 * 1000 + 2] = 0xc0;  // 0x7fc00000: a NaN at element 1000
  data[4 * 1000 + 3] = 0x7f;
  nan.tensors[0].data = data;
  put(root, "nan.gguf", write_bytes(nan));
  // A tensor that claims 16 MiB (past the end) and the NaN tensor inside that claim, past the
  // lookahead (so the scan meets it in the passing tail): the data check must still find the
  // NaN, as in the local file.
  Document past_end = nan;
  const std::size_t before = 2 * detail::kLookahead;
  past_end.tensors = {{"big", {std::uint64_t{1} << 22}, 0, 0, ByteVector(before, 0)},
                      nan.tensors[0]};
  past_end.tensors[1].offset = before;
  put(root, "past-end.gguf", write_bytes(past_end));
  const auto shards = model_shards(3);
  for (std::size_t k = 0; k < shards.size(); ++k) {
    put(root, "set/" + detail::shard_path("model", static_cast<std::uint32_t>(k + 1), 3),
        write_bytes(shards[k]));
    if (k != 1) {
      put(root, "gap/" + detail::shard_path("model", static_cast<std::uint32_t>(k + 1), 3),
          write_bytes(shards[k]));
    }
  }
  // A first shard of 200 (its split.count says so too) whose others never answer
  // (/first-only/), and a set named as 65535 shards whose first shard says 2.
  put(root, "slow/" + detail::shard_path("model", 1, 200), write_bytes(model_shards(200)[0]));
  const auto pair = model_shards(2);
  for (std::uint32_t k = 0; k < 2; ++k) {
    put(root, "wide/" + detail::shard_path("model", k + 1, 65535), write_bytes(pair[k]));
  }
  put(root, "hf/owner/repo/main/model.gguf", read_file(root / "tiny-llama.gguf"));
  put(root, "hf/owner/repo/v2/model.gguf", read_file(root / "vocab-only.gguf"));
}

// ctest runs every test in a process of its own, and writing the server's files was most of
// each test's time (2 s of CPU, 10 under ASan). They are written once per build of this
// program, beside it, and reused: a stamp with the program's size and time says they are whole
// and current, and a lock keeps tests that start together from writing them twice.
fs::path server_files() {
  const fs::path program = fs::read_symlink("/proc/self/exe");
  const fs::path root = program.parent_path() / "remote-test-files";
  const std::string lock_path = root.string() + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + lock_path);
  const std::string stamp = fmt::format("{} {}", fs::file_size(program),
                                        fs::last_write_time(program).time_since_epoch().count());
  const fs::path stamp_path = root / ".stamp";
  std::error_code ec;
  if (!fs::exists(stamp_path, ec) ||
      read_file(stamp_path) != ByteVector(stamp.begin(), stamp.end())) {
    fs::remove_all(root, ec);
    write_server_files(root);
    put(root, ".stamp", ByteVector(stamp.begin(), stamp.end()));
  }
  ::close(lock);  // and the lock with it
  return root;
}

class RemoteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!remote_supported()) return;
    root_ = server_files();
    const fs::path& root = root_;
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the tests
      if (::getppid() != parent) ::_exit(1);
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      const std::string script =
          std::string(GGUFCHECK_SOURCE_DIR) + "/validator/tests/http_server.py";
      ::execl("/usr/bin/python3", "python3", script.c_str(), root.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    char c = 0;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    base_ = "http://127.0.0.1:" + line;
  }
  static void TearDownTestSuite() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  void SetUp() override {
    if (!remote_supported()) GTEST_SKIP() << "built without GGUFCHECK_REMOTE";
    ASSERT_FALSE(base_.empty() || base_ == "http://127.0.0.1:") << "the server did not start";
    (void)body_of(base_ + "/_reset", "POST");
    options_ = Options{};
    options_.remote.backoff_ms = 10;  // retries in tests wait little
    options_.remote.hf_token = "";
    options_.remote.hf_endpoint = base_;
  }

  // The server's log once every request in it was answered (a request the client gave up on is
  // through when the server's write fails, a moment after the client moved on; polled, at most
  // 30 s). The stalls of AStallEndsAtTheTimeout are never through: that test reads no log.
  static json log() {
    json entries = json::parse(body_of(base_ + "/_log"));
    const auto through = [&] {
      return std::all_of(entries.begin(), entries.end(),
                         [](const json& e) { return e["done"].get<bool>(); });
    };
    for (int i = 0; i < 3000 && !through(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      entries = json::parse(body_of(base_ + "/_log"));
    }
    return entries;
  }
  // The log as it is now, requests still being answered included (a stall is never through).
  static json log_now() { return json::parse(body_of(base_ + "/_log")); }
  static std::uint64_t sent(const json& entries) {
    std::uint64_t n = 0;
    for (const auto& e : entries) n += e["sent"].get<std::uint64_t>();
    return n;
  }
  static std::string url(const std::string& path) { return base_ + path; }
  static std::string local(const std::string& name) { return (root_ / name).string(); }

  static fs::path root_;
  static pid_t pid_;
  static std::string base_;
  Options options_;
};
fs::path RemoteTest::root_;
pid_t RemoteTest::pid_ = -1;
std::string RemoteTest::base_;

// Findings and facts, without the path.
void expect_same_report(const Report& remote, const Report& local) {
  EXPECT_EQ(remote.facts.file_size, local.facts.file_size);
  EXPECT_EQ(remote.facts.data_start, local.facts.data_start);
  EXPECT_EQ(remote.facts.tensors_read, local.facts.tensors_read);
  EXPECT_EQ(remote.facts.kv_read, local.facts.kv_read);
  EXPECT_EQ(remote.facts.data_checked, local.facts.data_checked);
  EXPECT_EQ(remote.exit_status(), local.exit_status());
  ASSERT_EQ(remote.findings.size(), local.findings.size()) << show_report(remote);
  for (std::size_t i = 0; i < local.findings.size(); ++i) {
    const Finding& a = remote.findings[i];
    const Finding& b = local.findings[i];
    EXPECT_EQ(a.code, b.code) << i;
    EXPECT_EQ(a.severity, b.severity) << i;
    EXPECT_EQ(a.offset, b.offset) << i;
    EXPECT_EQ(a.length, b.length) << i;
    EXPECT_EQ(a.path, b.path) << i;
    EXPECT_EQ(a.message, b.message) << i;
  }
}

const Finding* unreadable(const Report& report) {
  for (const Finding& f : report.findings) {
    if (f.code == Code::UnreadableFile) return &f;
  }
  return nullptr;
}

TEST_F(RemoteTest, SameReportAsTheLocalFile) {
  for (const char* name : {"tiny-llama.gguf", "vocab-only.gguf", "nonzero-padding.gguf",
                           "empty.gguf", "pointer.gguf"}) {
    SCOPED_TRACE(name);
    const Report remote = validate_url(url(std::string("/files/") + name), options_);
    expect_same_report(remote, validate_file(local(name), options_));
    EXPECT_EQ(remote.path, url(std::string("/files/") + name));
  }
}

TEST_F(RemoteTest, TheTokenizerFileWithinFourRequestsAndItsMetadataPlusOneMiB) {
  const Report remote = validate_url(url("/files/tokenizer.gguf"), options_);
  const Report here = validate_file(local("tokenizer.gguf"), options_);
  expect_same_report(remote, here);
  const json entries = log();
  const std::uint64_t metadata = fs::file_size(local("tokenizer.gguf"));  // no tensors
  std::cout << "tokenizer file of " << metadata << " bytes: " << entries.size() << " requests, "
            << sent(entries) << " bytes served\n";
  EXPECT_LE(entries.size(), 4U);
  EXPECT_LE(sent(entries), metadata + (1 << 20));
  for (const auto& e : entries) {
    EXPECT_EQ(e["status"], 206);
    std::cout << "  " << e["range"].get<std::string>() << ": " << e["sent"] << " bytes\n";
  }
}

TEST_F(RemoteTest, AModelsTensorDataIsNotFetched) {
  const Report remote = validate_url(url("/files/model.gguf"), options_);
  expect_same_report(remote, validate_file(local("model.gguf"), options_));
  const json entries = log();
  const std::uint64_t infos_end = model().layout.infos_end;
  std::cout << "model of " << model().bytes.size() << " bytes, tensor infos end at " << infos_end
            << ": " << entries.size() << " requests, " << sent(entries) << " bytes served\n";
  // The metadata and tensor infos, at most a lookahead past their predicted end, and the padding
  // after the odd tensor (a few bytes).
  EXPECT_LE(sent(entries), infos_end + detail::kLookahead + infos_end / 16 + 64);
  EXPECT_LE(entries.size(), 5U);
}

TEST_F(RemoteTest, NonzeroPaddingBetweenTensorsIsFoundWithoutTheData) {
  const Report remote = validate_url(url("/files/nonzero-padding.gguf"), options_);
  bool found = false;
  for (const Finding& f : remote.findings) found = found || f.code == Code::NonzeroPadding;
  EXPECT_TRUE(found) << show_report(remote);
}

TEST_F(RemoteTest, DataOverHttp) {
  options_.data.enabled = true;
  options_.data.threads = 1;
  const Report remote = validate_url(url("/files/nan.gguf"), options_);
  const Report here = validate_file(local("nan.gguf"), options_);
  expect_same_report(remote, here);
  ASSERT_TRUE(remote.facts.data_checked);
  EXPECT_GT(*remote.facts.data_checked, 0U);
  bool nan = false;
  for (const Finding& f : remote.findings) nan = nan || f.code == Code::NonFiniteElement;
  EXPECT_TRUE(nan) << show_report(remote);
  EXPECT_EQ(sent(log()), fs::file_size(local("nan.gguf")));  // every byte, once
}

TEST_F(RemoteTest, ATensorPastTheEndHidesNoTensorItOverlaps) {
  options_.data.enabled = true;
  options_.data.threads = 1;
  const Report remote = validate_url(url("/files/past-end.gguf"), options_);
  const Report here = validate_file(local("past-end.gguf"), options_);
  expect_same_report(remote, here);
  std::set<Code> codes;
  for (const Finding& f : remote.findings) codes.insert(f.code);
  EXPECT_TRUE(codes.count(Code::TensorOutOfBounds)) << show_report(remote);
  EXPECT_TRUE(codes.count(Code::NonFiniteElement)) << show_report(remote);
  EXPECT_LT(sent(log()), here.facts.file_size + 1);  // nothing past the end was asked for
}

TEST_F(RemoteTest, AServerWithoutRangesIsStoppedEarly) {
  const Report r = validate_url(url("/norange/model.gguf"), options_);
  const Finding* f = unreadable(r);
  ASSERT_NE(f, nullptr) << show_report(r);
  EXPECT_NE(f->message.find("does not support range requests"), std::string::npos) << f->message;
  EXPECT_EQ(r.exit_status(), 2);
  const json entries = log();
  ASSERT_EQ(entries.size(), 1U);
  // What the server got out before the client closed: socket buffers, never the file.
  std::cout << "no range support: " << sent(entries) << " of " << model().bytes.size()
            << " bytes went out\n";
  EXPECT_LT(sent(entries), model().bytes.size() / 2);
}

TEST_F(RemoteTest, ASmallFileFromAServerWithoutRangesIsRead) {
  // A 200 with the whole file is harmless when the file is no more than the first request.
  const Report remote = validate_url(url("/norange/tiny-llama.gguf"), options_);
  expect_same_report(remote, validate_file(local("tiny-llama.gguf"), options_));
}

TEST_F(RemoteTest, LyingServers) {
  const std::vector<std::pair<std::string, std::string> > cases = {
      {"/lie-range/tokenizer.gguf", "not the bytes asked for"},
      {"/lie-length/tokenizer.gguf", "contradicts its Content-Range"},
      {"/more-body/tokenizer.gguf", "sent more than"},
      {"/change-size/tokenizer.gguf", "changed while being read: it was"},
      {"/change-etag/tokenizer.gguf", "changed while being read: its ETag"},
  };
  for (const auto& [path, words] : cases) {
    SCOPED_TRACE(path);
    const Report r = validate_url(url(path), options_);
    const Finding* f = unreadable(r);
    ASSERT_NE(f, nullptr) << show_report(r);
    EXPECT_NE(f->message.find(words), std::string::npos) << f->message;
    EXPECT_EQ(r.findings.size(), 1U);
  }
  // Each stopped at the first answer that contradicts what was asked or seen: no retry of a lie.
  std::map<std::string, int> requests;
  for (const auto& e : log()) requests[e["path"].get<std::string>()]++;
  EXPECT_EQ(requests["/lie-range/tokenizer.gguf"], 1);
  EXPECT_EQ(requests["/change-size/tokenizer.gguf"], 2);
}

TEST_F(RemoteTest, AStallEndsAtTheTimeout) {
  // The timeout (1 s) ends it, not the deadline (600 s) nor the server (60 s): the report says
  // "stalled", which only the timeout says. A regression that waits runs into the deadline's
  // message or ctest's TIMEOUT, never a pass.
  options_.remote.timeout_seconds = 1;
  for (const char* path : {"/stall/tokenizer.gguf", "/stall-headers/tokenizer.gguf"}) {
    SCOPED_TRACE(path);
    const Report r = validate_url(url(path), options_);
    const Finding* f = unreadable(r);
    ASSERT_NE(f, nullptr) << show_report(r);
    EXPECT_NE(f->message.find("stalled"), std::string::npos) << f->message;
    EXPECT_EQ(f->message.find("deadline"), std::string::npos) << f->message;
    EXPECT_EQ(r.exit_status(), 2);
  }
}

// --- the deadline, the metadata kept, split sets by URL ----------------------------------------
// No clock is read here: each wait is bounded by the client's own deadline, and what ended it is
// told by the report's words. Should a change lose the bound, the test runs into ctest's TIMEOUT
// (a failure): the trickle alone would take 400 s, a never-answering server 30 s each (timeout).

TEST_F(RemoteTest, TheDeadlineEndsWhatTheTimeoutDoesNot) {
  options_.remote.deadline_seconds = 2;  // the timeout stays 30 s
  const std::vector<std::pair<std::string, std::string> > cases = {
      // Nothing at all, until the client goes.
      {"/stall-headers/tokenizer.gguf", "no answer for bytes 0-1048575"},
      // 2.5 KB/s, above the stall's 1 KiB/s: the first MiB would take 400 s.
      {"/trickle/tokenizer.gguf", "of the 1048576 bytes asked for had arrived"},
  };
  for (const auto& [path, words] : cases) {
    SCOPED_TRACE(path);
    const Report r = validate_url(url(path), options_);
    const Finding* f = unreadable(r);
    ASSERT_NE(f, nullptr) << show_report(r);
    EXPECT_NE(f->message.find(words), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("the deadline of 2 s (--deadline) passed"), std::string::npos)
        << f->message;
    EXPECT_NE(f->hint.find("raise --deadline"), std::string::npos) << f->hint;
    EXPECT_EQ(r.findings.size(), 1U);
    EXPECT_EQ(r.exit_status(), 2);
  }
}

TEST_F(RemoteTest, NoRetryWaitsPastTheDeadline) {
  options_.remote.deadline_seconds = 2;
  options_.remote.retries = 3;
  options_.remote.backoff_ms = 5000;  // the first wait would end after the deadline
  const Report r = validate_url(url("/status/500/x.gguf"), options_);
  const Finding* f = unreadable(r);
  ASSERT_NE(f, nullptr) << show_report(r);
  EXPECT_NE(f->message.find("HTTP 500 Internal Server Error: the next try would come after the "
                            "deadline of 2 s (--deadline)"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(log().size(), 1U);  // one try, no wait
}

TEST_F(RemoteTest, ASetWhoseShardsNeverAnswerEndsAtTheDeadline) {
  // 200 shards by name and by split.count; the first answers, the others never do. They are
  // fetched kShardFetches at a time, so those begun wait for the deadline together, and the rest
  // are not begun: one report says so, not one each.
  options_.remote.deadline_seconds = 4;
  options_.remote.retries = 1;
  const auto groups =
      group_inputs({url("/first-only/slow/" + detail::shard_path("model", 1, 200))});
  ASSERT_EQ(groups.size(), 1U);
  ASSERT_EQ(groups[0].size(), 200U);
  const SetReports set = validate_set(groups[0], options_);
  std::string shown;
  for (const Report& r : set.reports) shown += r.path + ":\n" + show_report(r);
  // The first shard's report; one for each shard begun (kShardFetches, unless a thread came too
  // late on a loaded machine: at least one); one for the rest, not begun.
  ASSERT_GE(set.reports.size(), 3U) << shown;
  ASSERT_LE(set.reports.size(), 1 + detail::kShardFetches + 1) << shown;
  const std::size_t begun = set.reports.size() - 2;
  EXPECT_FALSE(set.reports[0].unreadable()) << shown;
  int status = 0;
  for (std::size_t k = 1; k < set.reports.size(); ++k) {
    SCOPED_TRACE(k);
    const Report& r = set.reports[k];
    status = std::max(status, r.exit_status());
    EXPECT_EQ(r.path, groups[0][k]);
    const Finding* f = unreadable(r);
    ASSERT_NE(f, nullptr) << shown;
    EXPECT_NE(f->message.find("the deadline of 4 s (--deadline) passed"), std::string::npos)
        << f->message;
    const std::string words = k <= begun ? std::string("no answer for bytes 0-1048575")
                                         : fmt::format("shards {} to 200 were not fetched", k + 1);
    EXPECT_NE(f->message.find(words), std::string::npos) << f->message;
  }
  EXPECT_EQ(status, 2);
  // The first shard, then one request for each shard begun, all at once: never more than
  // kShardFetches.
  std::map<std::string, int> requests;
  for (const auto& e : log_now()) requests[e["path"].get<std::string>()]++;
  EXPECT_EQ(requests.size(), 1 + begun);
  for (std::size_t k = 1; k <= begun; ++k) {
    EXPECT_EQ(requests["/first-only/slow/" +
                       detail::shard_path("model", static_cast<std::uint32_t>(k + 1), 200)],
              1)
        << k;
  }
  EXPECT_EQ(begun, detail::kShardFetches) << "fewer fetched at once than the cap: " << shown;
}

TEST_F(RemoteTest, ASetReadsNoMoreShardsThanTheFirstOnesSplitCount) {
  // Named as 65535 shards, split.count 2: two are read, and the name is the set's error.
  const auto groups = group_inputs({url("/files/wide/" + detail::shard_path("model", 1, 65535))});
  ASSERT_EQ(groups.size(), 1U);
  ASSERT_EQ(groups[0].size(), 65535U);
  const SetReports set = validate_set(groups[0], options_);
  ASSERT_EQ(set.reports.size(), 2U);
  const Finding* name = nullptr;
  for (const Finding& f : set.reports[0].findings) {
    if (f.code == Code::SplitFileName) name = &f;
  }
  ASSERT_NE(name, nullptr) << show_report(set.reports[0]);
  EXPECT_NE(name->message.find("split.count is 2 but the name says 65535 shards"),
            std::string::npos)
      << name->message;
  EXPECT_NE(name->message.find("shards 3 to 65535 were not fetched"), std::string::npos)
      << name->message;
  EXPECT_EQ(set.reports[0].exit_status(), 1);
  EXPECT_FALSE(set.reports[1].unreadable()) << show_report(set.reports[1]);
  std::set<std::string> paths;
  for (const auto& e : log()) paths.insert(e["path"].get<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"/files/wide/" + detail::shard_path("model", 1, 65535),
                                          "/files/wide/" + detail::shard_path("model", 2, 65535)}));
}

// The endless file: 1 TiB of 14-byte pairs, 2^36 of them declared.
Report endless_pairs(const std::string& url, const Options& options, std::size_t limit) {
  detail::StreamLimits limits;
  limits.metadata_limit = limit;
  detail::Validated out;
  Report report;
  const detail::RemoteOutcome outcome = detail::visit_remote(
      url, options, url, out, [&] { report = std::move(out.report); }, limits);
  if (outcome.state != detail::RemoteOutcome::State::Read) {
    return detail::remote_failure_report(url, outcome);
  }
  return report;
}

TEST_F(RemoteTest, EndlessMetadataIsGivenUpAtTheLimit) {
  constexpr std::size_t kLimit = std::size_t{4} << 20;
  const Report r = endless_pairs(url("/endless-pairs/x.gguf"), options_, kLimit);
  EXPECT_EQ(unreadable(r), nullptr) << show_report(r);
  const Finding* limit = nullptr;
  for (const Finding& f : r.findings) {
    if (f.code == Code::LimitExceeded) limit = &f;
  }
  ASSERT_NE(limit, nullptr) << show_report(r);
  EXPECT_NE(limit->message.find(fmt::format("does not end within the first {} bytes", kLimit)),
            std::string::npos)
      << limit->message;
  EXPECT_EQ(r.exit_status(), 1);
  EXPECT_EQ(r.facts.file_size, std::uint64_t{1} << 40);
  EXPECT_LE(sent(log()), kLimit);  // no byte past the limit was asked for
}

#ifndef GGUFCHECK_TESTS_UNDER_ASAN
// The process's address space now (VmSize), in bytes (not under ASan: the test that uses it
// does not run there).
std::uint64_t address_space() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  std::uint64_t kib = 0;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::sscanf(line, "VmSize: %lu kB", &kib) == 1) break;  // NOLINT(cert-err34-c)
  }
  std::fclose(status);
  return kib * 1024;
}
#endif

TEST_F(RemoteTest, EndlessMetadataIsReadInBoundedMemory) {
#ifdef GGUFCHECK_TESTS_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not fit under RLIMIT_AS";
#else
  // A child whose address space may grow 256 MiB past what it holds now: the reading keeps at
  // most the limit's bytes and the records of what they hold (about 5 times the bytes at most,
  // checks.hpp), so it ends with its GGUF0002 report, not out of memory.
  constexpr std::size_t kLimit = std::size_t{8} << 20;
  options_.helper_thread = false;  // no thread: no arena of its own
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::uint64_t now = address_space();
    const rlimit cap{now + (std::uint64_t{256} << 20), now + (std::uint64_t{256} << 20)};
    if (now == 0 || ::setrlimit(RLIMIT_AS, &cap) != 0) ::_exit(3);
    const Report r = endless_pairs(url("/endless-pairs/x.gguf"), options_, kLimit);
    const bool limited = std::any_of(r.findings.begin(), r.findings.end(), [](const Finding& f) {
      return f.code == Code::LimitExceeded;
    });
    ::_exit(unreadable(r) != nullptr ? 1 : limited ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: unreadable (out of memory), 2: no GGUF0002, 3: no limit";
#endif
}

TEST_F(RemoteTest, HttpErrorsAndRetries) {
  options_.remote.retries = 2;
  struct Case {
    std::string path;
    std::string words;
    int requests;
  };
  const std::vector<Case> cases = {
      {"/status/404/x.gguf", "HTTP 404 Not Found", 1},
      {"/status/401/x.gguf", "HTTP 401 Unauthorized", 1},
      {"/status/403/x.gguf", "HTTP 403 Forbidden", 1},
      {"/status/500/x.gguf", "HTTP 500 Internal Server Error (gave up after 3 tries)", 3},
      {"/status/429/x.gguf", "HTTP 429 Too Many Requests (gave up after 3 tries)", 3},
      {"/retry-after/3600/x.gguf", "retry after 3600 s, more than the 60 s", 1},
      {"/redirect-loop/x.gguf", "more than 10 redirects", 11},
      {"/files/missing.gguf", "HTTP 404 Not Found", 1},
  };
  // Nothing listens on port 1: a connection refused is transient, tried 3 times.
  const Report refused = validate_url("http://127.0.0.1:1/x.gguf", options_);
  ASSERT_NE(unreadable(refused), nullptr);
  EXPECT_NE(unreadable(refused)->message.find("cannot connect to http://127.0.0.1:1/x.gguf"),
            std::string::npos)
      << unreadable(refused)->message;
  EXPECT_NE(unreadable(refused)->message.find("gave up after 3 tries"), std::string::npos);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const Report r = validate_url(url(c.path), options_);
    const Finding* f = unreadable(r);
    ASSERT_NE(f, nullptr) << show_report(r);
    EXPECT_NE(f->message.find(c.words), std::string::npos) << f->message;
    if (c.path.find("/401/") != std::string::npos || c.path.find("/403/") != std::string::npos) {
      EXPECT_NE(f->hint.find("HF_TOKEN"), std::string::npos) << f->hint;
    }
  }
  std::map<std::string, int> requests;
  for (const auto& e : log()) requests[e["path"].get<std::string>()]++;
  for (const Case& c : cases) EXPECT_EQ(requests[c.path], c.requests) << c.path;
}

TEST_F(RemoteTest, TransientFailuresAreRetried) {
  options_.remote.retries = 3;
  const Report r = validate_url(url("/flaky/2/tiny-llama.gguf"), options_);
  expect_same_report(r, validate_file(local("tiny-llama.gguf"), options_));
  EXPECT_EQ(log().size(), 3U);  // two 503s, then the file
  options_.remote.retries = 1;
  (void)body_of(base_ + "/_reset", "POST");
  EXPECT_NE(unreadable(validate_url(url("/flaky/2/tiny-llama.gguf"), options_)), nullptr);
  EXPECT_EQ(log().size(), 2U);
}

TEST_F(RemoteTest, ABrokenTransferIsResumedWhereItStopped) {
  const Report r = validate_url(url("/cut/tokenizer.gguf"), options_);
  expect_same_report(r, validate_file(local("tokenizer.gguf"), options_));
  const json entries = log();
  ASSERT_GE(entries.size(), 2U);
  EXPECT_EQ(entries[0]["range"], "bytes=0-1048575");
  EXPECT_EQ(entries[0]["sent"], 524288);
  EXPECT_EQ(entries[1]["range"], "bytes=524288-1048575");  // the rest, not the whole again
  EXPECT_EQ(sent(entries), fs::file_size(local("tokenizer.gguf")));
}

TEST_F(RemoteTest, RedirectsAndTheToken) {
  options_.remote.hf_token = "secret";
  // The endpoint is this server (127.0.0.1): its own origin gets the token; localhost, where it
  // redirects, is another host and never does.
  const Report r = validate_url(url("/redirect/tiny-llama.gguf"), options_);
  expect_same_report(r, validate_file(local("tiny-llama.gguf"), options_));
  const Report same = validate_url(url("/redirect-same/vocab-only.gguf"), options_);
  expect_same_report(same, validate_file(local("vocab-only.gguf"), options_));
  const json entries = log();
  ASSERT_EQ(entries.size(), 4U) << entries.dump();
  EXPECT_EQ(entries[0]["path"], "/redirect/tiny-llama.gguf");
  EXPECT_EQ(entries[0]["authorization"], "Bearer secret");
  EXPECT_EQ(entries[1]["path"], "/files/tiny-llama.gguf");
  EXPECT_EQ(entries[1]["host"].get<std::string>().rfind("localhost:", 0), 0U);
  EXPECT_TRUE(entries[1]["authorization"].is_null()) << entries[1].dump();
  EXPECT_EQ(entries[2]["path"], "/redirect-same/vocab-only.gguf");
  EXPECT_EQ(entries[3]["path"], "/files/vocab-only.gguf");
  EXPECT_EQ(entries[3]["authorization"], "Bearer secret");  // the same origin
}

TEST_F(RemoteTest, TheTokenGoesToTheHubOnly) {
  // Another endpoint: this server is then no Hub, and gets no token.
  options_.remote.hf_token = "secret";
  options_.remote.hf_endpoint = "https://huggingface.co";
  (void)validate_url(url("/files/vocab-only.gguf"), options_);
  const json entries = log();
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_TRUE(entries[0]["authorization"].is_null());
}

TEST_F(RemoteTest, HfUrlsThroughTheEndpoint) {
  options_.remote.hf_token = "secret";
  const Report r = validate_url("hf://owner/repo/model.gguf", options_);
  EXPECT_EQ(r.path, "hf://owner/repo/model.gguf");
  expect_same_report(r, validate_file(local("tiny-llama.gguf"), options_));
  const Report v2 = validate_url("hf://owner/repo@v2/model.gguf", options_);
  expect_same_report(v2, validate_file(local("vocab-only.gguf"), options_));
  const json entries = log();
  ASSERT_EQ(entries.size(), 4U) << entries.dump();
  EXPECT_EQ(entries[0]["path"], "/owner/repo/resolve/main/model.gguf");
  EXPECT_EQ(entries[0]["authorization"], "Bearer secret");
  EXPECT_EQ(entries[1]["path"], "/files/hf/owner/repo/main/model.gguf");
  EXPECT_TRUE(entries[1]["authorization"].is_null());  // the storage host: no token
  EXPECT_EQ(entries[2]["path"], "/owner/repo/resolve/v2/model.gguf");
  const Report bad = validate_url("hf://owner/repo", options_);
  ASSERT_NE(unreadable(bad), nullptr);
  EXPECT_NE(unreadable(bad)->message.find("expected hf://OWNER/REPO/FILE"), std::string::npos);
}

TEST_F(RemoteTest, ASplitSetByUrl) {
  const std::string first = url("/files/set/" + detail::shard_path("model", 1, 3));
  const auto groups = group_inputs({first});
  ASSERT_EQ(groups.size(), 1U);
  ASSERT_EQ(groups[0].size(), 3U);  // the other shards' URLs, derived by name
  EXPECT_EQ(groups[0][2], url("/files/set/" + detail::shard_path("model", 3, 3)));
  const SetReports remote = validate_set(groups[0], options_);
  const SetReports here =
      validate_set(group_inputs({local("set/model-00001-of-00003.gguf")})[0], options_);
  ASSERT_EQ(remote.reports.size(), 3U);
  ASSERT_EQ(here.reports.size(), 3U);
  for (std::size_t k = 0; k < 3; ++k) expect_same_report(remote.reports[k], here.reports[k]);

  // A shard the server does not have is the set's finding, as a missing file is.
  const SetReports gap = validate_set(
      group_inputs({url("/files/gap/" + detail::shard_path("model", 1, 3))})[0], options_);
  ASSERT_EQ(gap.reports.size(), 2U);
  bool missing = false;
  for (const Finding& f : gap.reports[0].findings) {
    if (f.code == Code::SplitShardMissing) {
      missing = true;
      EXPECT_NE(f.message.find("HTTP 404 Not Found"), std::string::npos) << f.message;
    }
  }
  EXPECT_TRUE(missing) << show_report(gap.reports[0]);
}

TEST_F(RemoteTest, TheCommandLine) {
  // `ggufcheck URL` is `ggufcheck check URL`; the options reach the client.
  const CliRun ok = run_cli({url("/files/tiny-llama.gguf")});
  EXPECT_EQ(ok.status, 0) << ok.out;
  const CliRun missing = run_cli({"--retries", "0", url("/status/500/x.gguf"), "--format", "json"});
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_NE(missing.out.find("HTTP 500"), std::string::npos) << missing.out;
  const CliRun stall = run_cli({"check", "--timeout", "1", url("/stall-headers/x.gguf")});
  EXPECT_EQ(stall.status, 2) << stall.out;
  EXPECT_NE(stall.out.find("stalled"), std::string::npos) << stall.out;
  EXPECT_EQ(run_cli({"check", "--timeout", "0", url("/files/x.gguf")}).status, 3);
  EXPECT_EQ(run_cli({"check", "--retries", "-1", url("/files/x.gguf")}).status, 3);
  // --deadline ends what --timeout does not: a server that never answers.
  const CliRun late = run_cli({"check", "--deadline", "1", url("/stall-headers/x.gguf")});
  EXPECT_EQ(late.status, 2) << late.out;
  EXPECT_NE(late.out.find("the deadline of 1 s (--deadline) passed"), std::string::npos)
      << late.out;
  for (const char* bad : {"0", "604801", "1.5", "-1"}) {
    EXPECT_EQ(run_cli({"check", "--deadline", bad, url("/files/x.gguf")}).status, 3) << bad;
  }
  // hf:// through GGUFCHECK_HF_ENDPOINT, the token from HF_TOKEN.
  ::setenv("GGUFCHECK_HF_ENDPOINT", base_.c_str(), 1);
  ::setenv("HF_TOKEN", "from-env", 1);
  (void)body_of(base_ + "/_reset", "POST");
  const CliRun hf = run_cli({"hf://owner/repo/model.gguf"});
  ::unsetenv("GGUFCHECK_HF_ENDPOINT");
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(hf.status, 0) << hf.out;
  const json entries = log();
  ASSERT_GE(entries.size(), 2U);
  EXPECT_EQ(entries[0]["authorization"], "Bearer from-env");
  EXPECT_TRUE(entries[1]["authorization"].is_null());
  const CliRun help = run_cli({"check", "--help"});
  EXPECT_NE(help.out.find("--timeout"), std::string::npos);
  EXPECT_NE(help.out.find("--retries"), std::string::npos);
  EXPECT_NE(help.out.find("--deadline"), std::string::npos);
}

// The command loads libcurl when it first reads a URL. Where it cannot (here: a libcurl.so.4
// that is no library, found first on LD_LIBRARY_PATH), the URL is unreadable, GGUF0001 with the
// reason and exit 2, no request is made, and a local file beside it is checked as before.
TEST_F(RemoteTest, WithoutLibcurlAUrlIsUnreadableAndLocalFilesAreChecked) {
  const TempDir dir;
  (void)dir.write("libcurl.so.4", {});
  const std::string local =
      (fs::path(GGUFCHECK_SOURCE_DIR) / "examples" / "valid" / "tiny-llama.gguf").string();
  const char* const inherited = std::getenv("LD_LIBRARY_PATH");
  const std::optional<std::string> saved =
      inherited != nullptr ? std::optional<std::string>(inherited) : std::nullopt;
  ::setenv("LD_LIBRARY_PATH", dir.path().c_str(), 1);
  const CliRun run = run_cli({"--format", "json", url("/files/tiny-llama.gguf"), local});
  if (saved) {
    ::setenv("LD_LIBRARY_PATH", saved->c_str(), 1);
  } else {
    ::unsetenv("LD_LIBRARY_PATH");
  }
  EXPECT_EQ(run.status, 2) << run.out;
  ASSERT_TRUE(json::accept(run.out)) << run.out;
  const json files = json::parse(run.out)["files"];
  ASSERT_EQ(files.size(), 2U) << run.out;
  EXPECT_EQ(files[0]["status"], "unreadable") << run.out;
  ASSERT_EQ(files[0]["findings"].size(), 1U) << run.out;
  EXPECT_EQ(files[0]["findings"][0]["code"], "GGUF0001") << run.out;
  EXPECT_NE(files[0]["findings"][0]["message"].get<std::string>().find(
                "cannot load libcurl.so.4 (remote files need libcurl)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(files[1]["status"], "pass") << run.out;
  EXPECT_TRUE(log().empty()) << log().dump();
}

#endif  // GGUFCHECK_TEST_REMOTE

}  // namespace
}  // namespace ggufcheck::testing
