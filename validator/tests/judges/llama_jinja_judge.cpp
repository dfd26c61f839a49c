// llama_jinja_judge: the pinned llama.cpp's own Jinja engine (common/jinja/, compiled from the
// source tree conformance/setup unpacks) as a judge of which chat templates it can parse.
// Reads one path per line on stdin; for each prints "ok", "fail <message>" or "crash <signal>":
// each template is parsed in a forked child, so an engine that aborts or overflows its stack on
// one template does not stop the run.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "jinja/lexer.h"
#include "jinja/parser.h"

namespace {

// The child: 0 parsed, 1 refused (its message on the pipe).
int parse_one(const std::string& path, int out) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  std::string message;
  int status = 0;
  try {
    jinja::lexer lexer;
    const jinja::lexer_result tokens = lexer.tokenize(bytes.str());
    (void)jinja::parse_from_tokens(tokens);
  } catch (const std::exception& e) {
    message = e.what();
    status = 1;
  }
  const std::string line = message.substr(0, message.find('\n'));
  (void)!write(out, line.data(), line.size());
  return status;
}

}  // namespace

int main() {
  std::string path;
  while (std::getline(std::cin, path)) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 2;
    std::cout.flush();
    const pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
      close(pipe_fds[0]);
      _exit(parse_one(path, pipe_fds[1]));
    }
    close(pipe_fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
      message.append(buffer, static_cast<std::size_t>(n));
    }
    close(pipe_fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) {
      std::cout << "crash " << WTERMSIG(status) << '\n';
    } else if (WEXITSTATUS(status) == 0) {
      std::cout << "ok\n";
    } else {
      std::cout << "fail " << message << '\n';
    }
  }
  return 0;
}
