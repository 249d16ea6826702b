// Fuzz target: the oneDNN Graph JSON reader. Parse, build the graph, compile every partition,
// execute the small ones and compare every output with the reference. Every op is compiled
// with the output shapes the file gives (or inferred when unknown).
#include <string_view>

#include "convgrad/json.hpp"
#include "fuzz_util.hpp"

using namespace convgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        const json::document doc =
            json::parse(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.json");
        uint64_t seed = size;
        for (const op &o : doc.ops) {
            try {
                const compiled_partition best = compile_op(o, impl_choice::best);
                const compiled_partition ref = compile_op(o, impl_choice::reference);
                fuzz::run_and_compare(best, ref, seed++);
            } catch (const error &) {  // this op is invalid (or its inputs are intermediate): next
            }
        }
        // The whole graph as a graph: ids produced twice, ops added twice.
        graph g;
        for (const op &o : doc.ops) g.add_op(o);
        g.finalize();
        (void)g.get_partitions();
    } catch (const error &) {
    }
    return 0;
}
