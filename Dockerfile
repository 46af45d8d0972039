# skyplan as a container image: a static binary (musl) on distroless/static, run as a non-root
# user. For skyplan inside a cluster — examples/in-cluster/ runs `skyplan drift` nightly as a
# CronJob with this image.
#
#   docker build -t skyplan:0.1.0 .
#   docker run --rm skyplan:0.1.0 --version

# The build: Alpine's Rust targets musl, which links statically; ring and mimalloc compile C.
FROM rust:1-alpine AS build
RUN apk add --no-cache build-base
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin skyplan \
    && strip target/release/skyplan \
    && ./target/release/skyplan --version

# The image: the binary, CA certificates and a passwd with the nonroot user (uid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/skyplan /usr/local/bin/skyplan
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/skyplan"]
CMD ["--help"]
