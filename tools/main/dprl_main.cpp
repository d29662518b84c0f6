#include "tools/cli.hpp"

int main(int argc, char** argv) { return dprl::cli::main(argc, argv); }
