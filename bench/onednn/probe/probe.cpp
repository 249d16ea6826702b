// Compiles and links against oneDNN: proof that the installed headers and library are usable.
#include <dnnl.hpp>

int main() {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    return eng.get_kind() == dnnl::engine::kind::cpu ? 0 : 1;
}
