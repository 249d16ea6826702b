// `convgrad info`: version, CPU features and the kernel inventory, in dispatch order.
#include <iostream>

#include "commands.hpp"
#include "convgrad/version.hpp"
#include "dispatch/cpu_features.hpp"
#include "dispatch/registry.hpp"
#include "runner.hpp"

namespace convgrad::tool {
namespace {

void print_inventory() {
    using namespace convgrad::detail;
    std::cout << "kernels, in dispatch order (name  directions  types  needs  tile  here):\n";
    for (const impl_desc &d : impl_list()) {
        const bool native = effective_features().contains(d.needs());
        const bool emulated = !native && d.create_emulated && isa_available(d.emulation_isa);
        std::cout << "  " << d.name << "  " << d.directions.to_string() << "  "
                  << d.dtypes.to_string() << "  " << to_string(d.isa) << " ("
                  << (d.needs() == cpu_features{} ? "no features" : d.needs().to_string()) << ")  "
                  << (d.tile.nregs > 0 ? std::to_string(d.tile.vlen) + " lanes x " +
                                             std::to_string(d.tile.nregs) + " regs"
                                       : std::string("scalar"))
                  << "  "
                  << (native     ? "runs"
                      : emulated ? "emulated"
                                 : "not on this CPU")
                  << "\n";
    }
}

}  // namespace

void add_info_command(CLI::App &app, int &exit_code) {
    CLI::App *sub =
        app.add_subcommand("info",
                           "Show the version, the CPU features detected and the kernel inventory.\n"
                           "Example: convgrad info");
    static bool isa_levels = false;
    sub->add_flag(
        "--isa-levels", isa_levels,
        "print only the instruction-set levels the kernels are built for, one a line (the\n"
        "CONVGRAD_MAX_ISA caps the kernel tests run under, those that differ on this CPU)");
    sub->callback([&exit_code] {
        using namespace convgrad::detail;
        exit_code = 0;
        if (isa_levels) {
            for (cpu_isa l : inventory_isa_levels()) std::cout << to_string(l) << "\n";
            return;
        }
        std::cout << "convgrad " << convgrad::version().string << "\n";
        std::cout << "cpu: detected " << to_string(detected_isa()) << ", effective "
                  << to_string(effective_isa()) << " (cap with CONVGRAD_MAX_ISA)\n";
        std::cout << "cpu features: " << detected_features().to_string() << "\n";
        if (amx_permission_status() != amx_permission::not_asked)
            std::cout << "amx tile data: " << to_string(amx_permission_status()) << "\n";
        if (!(effective_features() == detected_features()))
            std::cout << "cpu features in effect: " << effective_features().to_string() << "\n";
        std::cout << "threads: " << current_threads() << " (OMP_NUM_THREADS)\n";
        print_inventory();
    });
}

}  // namespace convgrad::tool
