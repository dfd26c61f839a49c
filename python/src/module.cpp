// _ggufcheck: the Python extension under the `ggufcheck` package (python/ggufcheck/__init__.py
// is the public interface). Every call that reads a file runs without the GIL, so other Python
// threads go on during a long scan; a bytes-like input stays exported (so it cannot be resized)
// for the call, and the package hands over a copy of a writable one (another thread could
// change its bytes while they are read).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/hash.hpp"
#include "ggufcheck/info.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/version.hpp"

namespace py = pybind11;
using namespace ggufcheck;

namespace {

// The keyword arguments of validate/info, as the CLI's options; a bad value is a ValueError
// naming it.
// The CLI's range of -j/--jobs (the package's threads= checks it first; so does the C interface).
constexpr unsigned kMaxThreads = 1024;

unsigned checked_threads(unsigned threads) {
  if (threads > kMaxThreads) {
    throw py::value_error("threads must be a whole number from 0 to 1024, not " +
                          std::to_string(threads));
  }
  return threads;
}

// A path goes to the system as a C string: a NUL would cut it short and name another file.
const std::string& checked_path(const std::string& path) {
  if (path.find('\0') != std::string::npos) {
    throw py::value_error("a path cannot contain a NUL character");
  }
  return path;
}

Options make_options(const std::string& profile, bool data, unsigned threads, bool werror,
                     bool model_checks, bool template_checks,
                     const std::map<std::string, std::string>& severity,
                     const std::map<std::string, std::uint64_t>& limits,
                     const std::string& base = {}) {
  Options options;
  const auto parsed = parse_profile(profile);
  if (!parsed) {
    throw py::value_error("profile '" + profile + "' is not strict, spec or llama.cpp");
  }
  options.profile = *parsed;
  options.data.enabled = data;
  options.data.threads = checked_threads(threads);
  options.werror = werror;
  options.model_checks = model_checks;
  options.template_checks = template_checks;
  options.base_model = checked_path(base);
  for (const auto& [what, level] : severity) {
    const auto code = find_code(what);
    if (!code) throw py::value_error("unknown diagnostic '" + what + "'");
    const auto s = parse_severity(level);
    if (!s) {
      throw py::value_error("severity of " + what + ": '" + level +
                            "' is not error, warning, note or off");
    }
    if (const auto why = refuse_override(*code, *s)) throw py::value_error(*why);
    options.severity_overrides[*code] = *s;
  }
  for (const auto& [name, value] : limits) {
    try {
      cli::apply_limit(options.limits, name + "=" + std::to_string(value));
    } catch (const cli::UsageError& e) {
      throw py::value_error(e.message);
    }
  }
  return options;
}

// A bytes-like object's bytes, for as long as the view lives.
struct Buffer {
  py::buffer_info info;
  [[nodiscard]] Bytes bytes() const {
    return {static_cast<const std::uint8_t*>(info.ptr),
            static_cast<std::size_t>(info.size) * static_cast<std::size_t>(info.itemsize)};
  }
};

Buffer contiguous(const py::buffer& object) {
  py::buffer_info info = object.request();
  if (info.ndim > 1) {
    // A strided view would be read wrong: only C-contiguous buffers are accepted.
    throw py::type_error("a buffer of one dimension is needed (bytes, bytearray, memoryview)");
  }
  if (info.ndim == 1 && info.strides[0] != info.itemsize) {
    throw py::type_error("a contiguous buffer is needed");
  }
  return Buffer{std::move(info)};
}

struct ReportAndOptions {
  Report report;
  Options options;
};

std::string hash_json(const std::vector<std::string>& paths, const std::vector<std::string>& algos,
                      bool per_tensor, unsigned threads, int& status, std::string& error) {
  HashOptions options;
  for (const std::string& a : algos) {
    if (a == "sha256") {
      options.algorithms.sha256 = true;
    } else if (a == "sha1") {
      options.algorithms.sha1 = true;
    } else if (a == "xxh64") {
      options.algorithms.xxh64 = true;
    } else if (a == "uuid") {
      options.algorithms.uuid = true;
    } else {
      throw py::value_error("unknown digest '" + a + "' (xxh64, sha1, sha256, uuid)");
    }
  }
  // A manifest record always lists every tensor: its header digest and Merkle root are only
  // computed with them (the CLI refuses --format json --no-layer for the same reason).
  if (!per_tensor) {
    throw py::value_error(
        "per_tensor=False: a manifest record always lists every tensor (as 'ggufcheck hash "
        "--format json' refuses --no-layer)");
  }
  for (const std::string& path : paths) checked_path(path);
  // The manifest's records need the per-tensor sha256 (its Merkle root is over them).
  options.algorithms.sha256 = true;
  options.per_tensor = true;
  options.manifest = true;
  options.threads = checked_threads(threads);
  HashResult result;
  {
    py::gil_scoped_release release;
    result = hash_model(paths, options);
  }
  status = result.status;
  error = result.error;
  return status == 0 ? render_manifest_model(result, options) : std::string();
}

}  // namespace

PYBIND11_MODULE(_ggufcheck, m) {
  m.doc() = "ggufcheck's C++ library (use the ggufcheck package, not this module)";

  py::class_<Finding>(m, "Finding")
      .def_property_readonly("code", [](const Finding& f) { return code_string(f.code); })
      .def_property_readonly("name", [](const Finding& f) { return catalogue_entry(f.code).name; })
      .def_property_readonly("severity", [](const Finding& f) { return to_string(f.severity); })
      .def_readonly("offset", &Finding::offset)
      .def_readonly("length", &Finding::length)
      .def_readonly("path", &Finding::path)
      .def_readonly("message", &Finding::message)
      .def_property_readonly("hint", [](const Finding& f) -> std::optional<std::string> {
        return f.hint.empty() ? std::nullopt : std::optional<std::string>(f.hint);
      });

  py::class_<ReportAndOptions>(m, "Report")
      .def_property_readonly("path", [](const ReportAndOptions& r) { return r.report.path; })
      .def_property_readonly("findings",
                             [](const ReportAndOptions& r) { return r.report.findings; })
      .def_property_readonly("errors", [](const ReportAndOptions& r) { return r.report.errors; })
      .def_property_readonly("warnings",
                             [](const ReportAndOptions& r) { return r.report.warnings; })
      .def_property_readonly("notes", [](const ReportAndOptions& r) { return r.report.notes; })
      .def_property_readonly("findings_dropped",
                             [](const ReportAndOptions& r) { return r.report.findings_dropped; })
      .def_property_readonly("exit_status",
                             [](const ReportAndOptions& r) { return r.report.exit_status(); })
      .def_property_readonly("unreadable",
                             [](const ReportAndOptions& r) { return r.report.unreadable(); })
      .def("to_json", [](const ReportAndOptions& r) {
        return render_json(std::span(&r.report, 1), r.options, r.report.exit_status());
      });

  m.def(
      "validate_path",
      [](const std::string& path, const std::string& profile, bool data, unsigned threads,
         bool werror, bool model_checks, bool template_checks,
         const std::map<std::string, std::string>& severity,
         const std::map<std::string, std::uint64_t>& limits, const std::string& base) {
        ReportAndOptions out{{},
                             make_options(profile, data, threads, werror, model_checks,
                                          template_checks, severity, limits, base)};
        checked_path(path);
        py::gil_scoped_release release;
        out.report = validate_file(path, out.options);
        return out;
      },
      py::arg("path"), py::arg("profile"), py::arg("data"), py::arg("threads"), py::arg("werror"),
      py::arg("model_checks"), py::arg("template_checks"), py::arg("severity"), py::arg("limits"),
      py::arg("base") = std::string());

  m.def(
      "validate_buffer",
      [](const py::buffer& buffer, const std::string& name, const std::string& profile, bool data,
         unsigned threads, bool werror, bool model_checks, bool template_checks,
         const std::map<std::string, std::string>& severity,
         const std::map<std::string, std::uint64_t>& limits, const std::string& base) {
        ReportAndOptions out{{},
                             make_options(profile, data, threads, werror, model_checks,
                                          template_checks, severity, limits, base)};
        const Buffer view = contiguous(buffer);
        py::gil_scoped_release release;
        out.report = validate(view.bytes(), out.options, name);
        return out;
      },
      py::arg("buffer"), py::arg("name"), py::arg("profile"), py::arg("data"), py::arg("threads"),
      py::arg("werror"), py::arg("model_checks"), py::arg("template_checks"), py::arg("severity"),
      py::arg("limits"), py::arg("base") = std::string());

  // info: the JSON document of `ggufcheck info --format json` for one input (docs/info.md).
  m.def(
      "info_path",
      [](const std::string& path, const std::string& profile, bool full) {
        Options options = make_options(profile, false, 0, false, true, true, {}, {});
        InfoOptions info_options;
        info_options.full = full;
        checked_path(path);
        py::gil_scoped_release release;
        return render_info_json({info_file(path, options, info_options)});
      },
      py::arg("path"), py::arg("profile"), py::arg("full"));
  m.def(
      "info_buffer",
      [](const py::buffer& buffer, const std::string& name, const std::string& profile, bool full) {
        Options options = make_options(profile, false, 0, false, true, true, {}, {});
        InfoOptions info_options;
        info_options.full = full;
        const Buffer view = contiguous(buffer);
        py::gil_scoped_release release;
        return render_info_json({info_bytes(view.bytes(), options, info_options, name)});
      },
      py::arg("buffer"), py::arg("name"), py::arg("profile"), py::arg("full"));

  // hash: one model's manifest record (docs/hash.md) as JSON text, with the status and error.
  m.def(
      "hash_paths",
      [](const std::vector<std::string>& paths, const std::vector<std::string>& algorithms,
         bool per_tensor, unsigned threads) {
        int status = 0;
        std::string error;
        std::string text = hash_json(paths, algorithms, per_tensor, threads, status, error);
        return py::make_tuple(status, error, text);
      },
      py::arg("paths"), py::arg("algorithms"), py::arg("per_tensor"), py::arg("threads"));

  m.def("catalogue_json", &render_catalogue_json);
  m.def("explain", [](const std::string& code_or_name) {
    const auto code = find_code(code_or_name);
    if (!code) throw py::value_error("unknown diagnostic '" + code_or_name + "'");
    return render_explanation(*code);
  });
  m.def("version", [] { return std::string(tool_version()); });
  m.def("commit", [] { return std::string(tool_commit()); });
  m.def("llama_cpp_version", [] { return std::string(llama_cpp_version()); });

  // `python -m ggufcheck`: the command line itself (argv[0] included), which writes to the
  // process's standard output and error and closes standard output when it ends.
  m.def("run_cli", [](const std::vector<std::string>& args) {
    std::vector<std::string> owned = args;
    std::vector<char*> argv;
    argv.reserve(owned.size() + 1);
    for (std::string& a : owned) argv.push_back(a.data());
    argv.push_back(nullptr);
    py::gil_scoped_release release;
    return cli::cli_main(static_cast<int>(owned.size()), argv.data());
  });
}
