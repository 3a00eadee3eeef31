// The auth module's public surface: token verification (jose), principals from claims, the pure
// permission policy, and the built-in identity provider. Persistence is injected (store implements it).
