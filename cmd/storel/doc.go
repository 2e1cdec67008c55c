// Command storel runs SDQLite tensor programs on data in any storage
// format: `storel run` computes a program's result, `storel explain`
// shows the plans at every stage, and `storel demo` runs a paper kernel on
// built-in data. The flags and exit statuses are the contract of
// docs/design.md §4: 0 success, 1 a problem in the user's input, 2 misuse.
package main
