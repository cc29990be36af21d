// The `Buffer` the record conversions use (Keycloak's base64 credentials and PHC strings), for the
// browser, which has none: the bundle injects it where the code names the global.
export { Buffer } from 'buffer';
