// `convgrad info`: version, CPU features and the kernels that can run.
#include <iostream>

#include "commands.hpp"
#include "convgrad/version.hpp"
#include "dispatch/cpu_features.hpp"
#include "dispatch/registry.hpp"
#include "runner.hpp"

namespace convgrad::tool {

void add_info_command(CLI::App &app, int &exit_code) {
    CLI::App *sub = app.add_subcommand(
        "info", "Show the version, the CPU features detected and the kernels available.\n"
                "Example: convgrad info");
    sub->callback([&exit_code] {
        using namespace convgrad::detail;
        std::cout << "convgrad " << convgrad::version().string << "\n";
        std::cout << "cpu: detected " << to_string(detected_isa()) << ", effective "
                  << to_string(effective_isa()) << " (cap with CONVGRAD_MAX_ISA)\n";
        std::cout << "cpu features: " << detected_features().to_string() << "\n";
        if (!(effective_features() == detected_features()))
            std::cout << "cpu features in effect: " << effective_features().to_string() << "\n";
        std::cout << "threads: " << current_threads() << " (OMP_NUM_THREADS)\n";
        std::cout << "kernels, in dispatch order:\n";
        for (const auto &d : impl_list()) {
            const bool usable = isa_available(d.isa);
            std::cout << "  " << d.name << "  needs " << to_string(d.isa) << (usable ? "" : "  (not on this CPU)")
                      << "\n";
        }
        exit_code = 0;
    });
}

}  // namespace convgrad::tool
