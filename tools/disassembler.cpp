#include "tools/disassembler.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "runtime/file_io.h"

extern char** environ;

namespace normjit::tools {
namespace fs = std::filesystem;

namespace {
bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }
}  // namespace

std::string find_disassembler() {
  if (const char* named = std::getenv("NORMJIT_NVDISASM"); named && *named) {
    if (!executable(named))
      throw std::runtime_error(std::string("NORMJIT_NVDISASM names '") + named +
                               "', which is not an executable file. Point it at nvdisasm, or unset it to search "
                               "PATH and /usr/local/cuda/bin.");
    return named;
  }
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      const size_t end = std::min(dirs.find(':', start), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "nvdisasm";
      if (end > start && executable(candidate)) return candidate.string();
      start = end + 1;
    }
  }
  const fs::path toolkit = "/usr/local/cuda/bin/nvdisasm";
  if (executable(toolkit)) return toolkit.string();
  throw std::runtime_error(
      "no nvdisasm found (NORMJIT_NVDISASM is unset; none on PATH or in /usr/local/cuda/bin). It comes with the "
      "full CUDA toolkit, or from PyPI: `pip install nvidia-cuda-nvdisasm` puts one in site-packages/nvidia/"
      "cu13/bin; then set NORMJIT_NVDISASM to it.");
}

void print_sass(const std::string& tool, const std::vector<char>& cubin) {
  const std::string file = (fs::temp_directory_path() / ("normjit-sass-" + runtime::unique_suffix() + ".cubin")).string();
  struct Remove {  // whatever happens below, a partly written file included
    std::string file;
    ~Remove() { std::remove(file.c_str()); }
  } remove{file};
  std::string why;
  if (!runtime::write_new_file(file, cubin, why)) throw std::runtime_error("cannot write the cubin to " + file + ": " + why);
  std::fflush(stdout);  // what was printed before comes before nvdisasm's output
  std::string flag = "-c";  // code sections only
  char* argv[] = {const_cast<char*>(tool.c_str()), flag.data(), const_cast<char*>(file.c_str()), nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, tool.c_str(), nullptr, nullptr, argv, environ) != 0)
    throw std::runtime_error("cannot run " + tool);
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) throw std::runtime_error("lost track of " + tool);
  // The reader closed the pipe (`| head`, `| less` quit): nothing went wrong.
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) return;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(tool + " failed on the cubin (" +
                             (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                : "signal " + std::to_string(WTERMSIG(status))) +
                             ")");
}

}  // namespace normjit::tools
