# Reference numbers from R's own prcomp, summary.prcomp and predict.prcomp, for
# tests/test_prcomp_reference.py.  Run from the repository root:
#
#     Rscript tests/reference/prcomp.R
#
# It reads two bundled data sets from data/ exactly as certpca.datasets reads them
# (lrs: the 93 flux columns; alon: log2 of the intensities floored at 20), fits
# prcomp on all samples but the last HOLDOUT, predicts the held-out samples, and
# writes CSV files here: <set>_<mode>_{sdev,rotation,x,predict,importance,proportion,center,scale}.csv
# with mode "center" (center = TRUE, scale. = FALSE) and "scale" (both TRUE).
# Numbers are written with 17 significant digits.
HOLDOUT <- 10
RANK <- 5
out_dir <- file.path("tests", "reference")

read_set <- function(name) {
  if (name == "lrs") {
    d <- read.csv(gzfile(file.path("data", "lrs.csv.gz")), check.names = FALSE, row.names = 1)
    d <- d[, grepl("^(blue|red)_[0-9.]+um$", colnames(d))]
    return(as.matrix(d))
  }
  if (name == "alon") {
    d <- read.csv(gzfile(file.path("data", "colon_alon.csv.gz")), check.names = FALSE, row.names = 1)
    return(log2(pmax(as.matrix(d), 20)))
  }
  stop("unknown set ", name)
}

write_num <- function(x, file, ...) {
  write.csv(format_frame(x), file.path(out_dir, file), quote = TRUE, ...)
}

format_frame <- function(x) {
  x <- as.data.frame(x, check.names = FALSE)
  for (j in seq_along(x)) x[[j]] <- trimws(formatC(x[[j]], digits = 17, format = "g"))
  x
}

for (set in c("lrs", "alon")) {
  X <- read_set(set)
  n <- nrow(X)
  train <- X[seq_len(n - HOLDOUT), , drop = FALSE]
  new <- X[(n - HOLDOUT + 1):n, , drop = FALSE]
  # prcomp refuses to scale constant columns; drop them as certpca.data.prepare does
  keep <- apply(train, 2, function(v) max(v) > min(v))
  cat(set, ": ", nrow(train), " training samples, ", sum(keep), " of ", ncol(X),
      " features vary, ", HOLDOUT, " held out\n", sep = "")
  train <- train[, keep, drop = FALSE]
  for (mode in c("center", "scale")) {
    p <- prcomp(train, center = TRUE, scale. = (mode == "scale"), rank. = RANK)
    s <- summary(p)
    stem <- paste0(set, "_", mode, "_")
    write_num(data.frame(sdev = p$sdev), paste0(stem, "sdev.csv"), row.names = FALSE)
    write_num(p$rotation, paste0(stem, "rotation.csv"))
    write_num(p$x, paste0(stem, "x.csv"))
    write_num(predict(p, newdata = new), paste0(stem, "predict.csv"))
    write_num(s$importance, paste0(stem, "importance.csv"))   # proportions rounded to 5 digits by R
    write_num(data.frame(proportion = p$sdev^2 / sum(p$sdev^2)), paste0(stem, "proportion.csv"),
              row.names = FALSE)                                   # the same, unrounded
    write_num(data.frame(center = p$center, row.names = names(p$center)), paste0(stem, "center.csv"))
    if (!isFALSE(p$scale)) {
      write_num(data.frame(scale = p$scale, row.names = names(p$scale)), paste0(stem, "scale.csv"))
    }
    print(p$sdev[seq_len(RANK + 1)])
  }
}
# center = FALSE, scale. = TRUE: prcomp divides by the root mean square sqrt(sum(x^2)/(n-1))
p <- prcomp(read_set("lrs")[1:100, 1:10], center = FALSE, scale. = TRUE, rank. = 3)
write_num(data.frame(scale = p$scale, row.names = names(p$scale)), "lrs_noncentred_scale.csv")
write_num(p$x, "lrs_noncentred_x.csv")
writeLines(R.version.string, file.path(out_dir, "R_VERSION"))
