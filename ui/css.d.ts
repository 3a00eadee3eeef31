// Stylesheets are imported for their side effect: esbuild bundles them into the page's CSS asset.
declare module '*.css';
