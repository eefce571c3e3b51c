// expect: 4:5: field 'inner' of header h_t cannot have type struct s_t
struct s_t { varbit<8> f; }
header h_t {
    s_t inner;
}
