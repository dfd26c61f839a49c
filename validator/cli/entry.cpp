// The ggufcheck executable: the command line of cli/main.cpp (also run by `python -m ggufcheck`).
#include "cli.hpp"

int main(int argc, char** argv) {
  return ggufcheck::cli::cli_main(argc, argv);
}
