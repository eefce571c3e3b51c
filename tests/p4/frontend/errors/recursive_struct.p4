// expect: 3:5: type 'node_t' is used inside its own declaration
struct node_t {
    node_t next;
}
