// Starts Swagger UI on /docs from a file of its own, not an inline script, so /docs keeps the
// strict Content-Security-Policy of every page (no 'unsafe-inline', nothing from another origin).
"use strict";

SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
