// @nodelet/oci: image references, OCI image layouts, deterministic image build, read-only distribution registry.
export {};
