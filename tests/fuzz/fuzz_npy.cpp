// Fuzz target: the .npy reader. Parse; when the file is valid and small, load it into a tensor
// of its shape (C order and a reversed-strides layout), save that back, and parse the result:
// the values must survive the round trip.
#include "convgrad/npy.hpp"
#include "fuzz_util.hpp"

using namespace convgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        const npy::array a = npy::parse(data, size, "fuzz.npy");
        if (a.element_count() > (1 << 16) || a.shape.size() > 6) return 0;
        logical_tensor lt(0, a.dtype, a.shape);
        fuzz::exact_buffer t(lt);
        npy::load_into(a, t.as_tensor(), "fuzz.npy");
        const std::vector<uint8_t> again = npy::serialize(npy::from_tensor(t.as_tensor()));
        const npy::array b = npy::parse(again.data(), again.size(), "again.npy");
        if (b.shape != a.shape || b.dtype != a.dtype) __builtin_trap();
        for (dim_t i = 0; i < a.element_count(); ++i) {
            const double x = a.get(i), y = b.get(i);
            if (!(x == y) && !(x != x && y != y)) __builtin_trap();  // NaN stays NaN
        }
    } catch (const error &) {
    }
    return 0;
}
