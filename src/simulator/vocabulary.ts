/** Word lists for the seeded data: Spanish (Argentine) product, customer and place names, accents included. */

/** A product noun with its category. */
export const PRODUCTS: ReadonlyArray<{ noun: string; category: string; sizes: readonly string[] }> = [
  { noun: 'Zapatilla', category: 'Calzado', sizes: ['38', '39', '40', '41', '42', '43', '44'] },
  { noun: 'Bota', category: 'Calzado', sizes: ['36', '37', '38', '39', '40', '41'] },
  { noun: 'Camiseta', category: 'Indumentaria', sizes: ['S', 'M', 'L', 'XL'] },
  { noun: 'Campera', category: 'Indumentaria', sizes: ['S', 'M', 'L', 'XL', 'XXL'] },
  { noun: 'Pantalón', category: 'Indumentaria', sizes: ['38', '40', '42', '44', '46'] },
  { noun: 'Buzo', category: 'Indumentaria', sizes: ['S', 'M', 'L', 'XL'] },
  { noun: 'Mate', category: 'Hogar', sizes: [] },
  { noun: 'Termo', category: 'Hogar', sizes: ['500 ml', '1 l', '1,2 l'] },
  { noun: 'Bombilla', category: 'Hogar', sizes: [] },
  { noun: 'Sartén', category: 'Cocina', sizes: ['20 cm', '24 cm', '28 cm'] },
  { noun: 'Cuchillo', category: 'Cocina', sizes: [] },
  { noun: 'Almohada', category: 'Dormitorio', sizes: ['50x70', '60x90'] },
  { noun: 'Acolchado', category: 'Dormitorio', sizes: ['1 plaza', '2 plazas', 'Queen', 'King'] },
  { noun: 'Mochila', category: 'Accesorios', sizes: ['20 l', '30 l', '40 l'] },
  { noun: 'Cinturón', category: 'Accesorios', sizes: ['90', '100', '110'] },
  { noun: 'Lámpara', category: 'Iluminación', sizes: [] },
  { noun: 'Parlante', category: 'Electrónica', sizes: [] },
  { noun: 'Auriculares', category: 'Electrónica', sizes: [] },
  { noun: 'Yerba mate', category: 'Almacén', sizes: ['500 g', '1 kg'] },
  { noun: 'Dulce de leche', category: 'Almacén', sizes: ['400 g', '1 kg'] },
];

export const QUALIFIERS: readonly string[] = [
  'clásico', 'de algodón', 'de cuero', 'térmico', 'deportivo', 'de acero inoxidable', 'artesanal',
  'premium', 'de lana', 'impermeable', 'de alpaca', 'ecológico', 'compacto', 'edición otoño',
];

export const BRANDS: readonly string[] = [
  'Ñandú', 'Pampa Sur', 'Andino', 'Güemes', 'Patagonia Viva', 'La Señorita', 'Río de la Plata', 'Cóndor',
  'Aconcagua', 'Tierra Fueguina',
];

export const COLORS: readonly string[] = ['Negro', 'Blanco', 'Azul marino', 'Rojo', 'Verde oliva', 'Marrón', 'Gris', 'Beige'];

export const MATERIALS: readonly string[] = ['Algodón', 'Cuero', 'Poliéster', 'Acero', 'Madera', 'Cerámica', 'Lana'];

export const FIRST_NAMES: readonly string[] = [
  'José', 'María', 'Sofía', 'Martín', 'Inés', 'Ramón', 'Agustín', 'Lucía', 'Julián', 'Máximo', 'Begoña',
  'Valentina', 'Matías', 'Camila', 'Joaquín', 'Micaela', 'Tomás', 'Ailén', 'Facundo', 'Mónica',
];

export const LAST_NAMES: readonly string[] = [
  'González', 'Rodríguez', 'Pérez', 'Fernández', 'López', 'Martínez', 'Gómez', 'Díaz', 'Sánchez', 'Romero',
  'Álvarez', 'Muñoz', 'Peña', 'Ibáñez', 'Núñez', 'Acuña', 'Benítez', 'Suárez', 'Giménez', 'Ríos',
];

/** A province with cities, codes and its postal code prefix. */
export const PLACES: ReadonlyArray<{ state: string; stateCode: string; cities: readonly string[]; postal: string }> = [
  { state: 'Buenos Aires', stateCode: 'B', cities: ['La Plata', 'Mar del Plata', 'Bahía Blanca', 'Tandil'], postal: '7' },
  { state: 'Ciudad Autónoma de Buenos Aires', stateCode: 'C', cities: ['Palermo', 'Caballito', 'Núñez', 'Villa Crespo'], postal: '14' },
  { state: 'Córdoba', stateCode: 'X', cities: ['Córdoba', 'Río Cuarto', 'Villa María'], postal: '50' },
  { state: 'Santa Fe', stateCode: 'S', cities: ['Rosario', 'Santa Fe', 'Rafaela'], postal: '20' },
  { state: 'Mendoza', stateCode: 'M', cities: ['Mendoza', 'San Rafael', 'Godoy Cruz'], postal: '55' },
  { state: 'Tucumán', stateCode: 'T', cities: ['San Miguel de Tucumán', 'Tafí Viejo'], postal: '40' },
  { state: 'Neuquén', stateCode: 'Q', cities: ['Neuquén', 'San Martín de los Andes'], postal: '83' },
  { state: 'Río Negro', stateCode: 'R', cities: ['San Carlos de Bariloche', 'Viedma'], postal: '84' },
  { state: 'Entre Ríos', stateCode: 'E', cities: ['Paraná', 'Concepción del Uruguay'], postal: '31' },
];

export const STREETS: readonly string[] = [
  'Av. Corrientes', 'San Martín', 'Belgrano', 'Rivadavia', 'Sarmiento', 'Av. de Mayo', 'Güemes', 'Echeverría',
  'Av. Córdoba', 'Mitre', 'Moreno', 'Av. Santa Fe',
];

export const MAIL_DOMAINS: readonly string[] = ['gmail.com', 'hotmail.com', 'yahoo.com.ar', 'outlook.com', 'fibertel.com.ar'];

/** Warehouses (DepStock codes). */
export const WAREHOUSES: readonly string[] = ['DEP-CENTRAL', 'DEP-NORTE', 'DEP-SUR', 'DEP-CORDOBA'];

/** Price lists: id → code. */
export const PRICE_LISTS: ReadonlyArray<{ id: number; code: string }> = [
  { id: 1, code: 'MINORISTA' },
  { id: 2, code: 'MAYORISTA' },
  { id: 3, code: 'OUTLET' },
];

export const PAY_METHODS: ReadonlyArray<{ Id: number; Name: string; Description: string; control: string }> = [
  { Id: 1, Name: 'Mercado Pago', Description: 'Tarjeta de crédito o débito vía Mercado Pago', control: 'MercadoPago' },
  { Id: 2, Name: 'Transferencia bancaria', Description: 'Transferencia o depósito, acreditación en 48 h', control: 'BankTransfer' },
  { Id: 3, Name: 'Efectivo en sucursal', Description: 'Pago en efectivo al retirar', control: 'Cash' },
  { Id: 4, Name: 'Tarjeta de crédito', Description: 'Visa, Mastercard, American Express (hasta 12 cuotas)', control: 'CreditCard' },
];

export const SHIPPING_METHODS: ReadonlyArray<{ Id: number; Name: string; Code: string; Display: string; cost: number }> = [
  { Id: 1, Name: 'Retiro en sucursal', Code: 'PICKUP', Display: 'Retirá gratis en nuestra sucursal', cost: 0 },
  { Id: 2, Name: 'Correo Argentino', Code: 'CORREO', Display: 'Envío a domicilio por Correo Argentino', cost: 3500 },
  { Id: 3, Name: 'Andreani', Code: 'ANDREANI', Display: 'Envío a domicilio por Andreani', cost: 4800 },
  { Id: 4, Name: 'Moto mensajería', Code: 'MOTO', Display: 'Entrega en el día (CABA)', cost: 2900 },
];

/** Documented sale statuses and their text. */
export const SALE_STATUSES: ReadonlyArray<{ status: number; text: string; weight: number }> = [
  { status: 0, text: 'Pendiente', weight: 3 },
  { status: 1, text: 'Confirmada', weight: 4 },
  { status: 2, text: 'En proceso', weight: 2 },
  { status: 3, text: 'Completada', weight: 2 },
  { status: 6, text: 'Entregada', weight: 2 },
  { status: -1, text: 'Rechazada', weight: 1 },
  { status: -2, text: 'Cancelada', weight: 1 },
];
