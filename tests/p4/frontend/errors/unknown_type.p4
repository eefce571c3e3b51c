// expect: 3:5: unknown type 'nosuch_t'
struct s_t {
    nosuch_t f;
}
