// expect: 2:1: unsupported: generic struct declarations
struct pair_t<T> {
    T first;
    T second;
}
