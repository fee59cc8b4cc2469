// placeholder: replaced this session
