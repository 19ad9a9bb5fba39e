# Reference loadings from R's nsprcomp (Sigg & Buhmann 2008's EM, by its author), for
# tests/test_nsprcomp_reference.py.  Not run directly: tests/reference/nsprcomp.py writes
# the prepared matrices (centred, optionally scaled, as certpca.load prepares them) as
# raw little-endian doubles, column-major, with a manifest, and calls
#
#     Rscript tests/reference/nsprcomp.R <manifest.csv> <out.csv>
#
# Each case is the first component of nsprcomp with its defaults (5 restarts,
# em_tol 1e-3, em_maxiter 100) on data already prepared (center = FALSE, scale. = FALSE),
# seed 1.  The output lists each case's nonzero loadings with 17 significant digits.
suppressMessages(library(nsprcomp))
args <- commandArgs(trailingOnly = TRUE)
cases <- read.csv(args[1], stringsAsFactors = FALSE)
rows <- list()
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  con <- file(cs$file, "rb")
  X <- matrix(readBin(con, "double", n = cs$n * cs$d, endian = "little"), nrow = cs$n, ncol = cs$d)
  close(con)
  set.seed(1)
  fit <- nsprcomp(X, ncomp = 1, k = cs$k, nneg = as.logical(cs$nneg), center = FALSE, scale. = FALSE)
  w <- fit$rotation[, 1]
  nz <- which(w != 0)
  rows[[i]] <- data.frame(case = cs$case, feature = nz - 1L,
                          loading = trimws(formatC(w[nz], digits = 17, format = "g")))
}
write.csv(do.call(rbind, rows), args[2], row.names = FALSE, quote = FALSE)
