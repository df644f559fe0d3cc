// Swagger UI over this server's own document. No validator badge (it
// would call a public service) and no request the page's Content Security
// Policy does not allow: everything comes from this server.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: true,
    withCredentials: true,
  });
});
