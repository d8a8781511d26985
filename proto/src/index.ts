// @nodelet/proto: pinned CRI v1 api.proto and generated TypeScript types; no logic.
export {};
