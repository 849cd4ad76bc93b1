// Placeholder: replaced as the tests are written.
