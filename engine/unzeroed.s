// Empty: its presence lets unzeroed.go declare mallocgc without a body.
